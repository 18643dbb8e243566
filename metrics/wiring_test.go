package metrics

import (
	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/worker"
)

// The real sources satisfy the interfaces, so the wiring in cmd/rdmamesh is
// one line each; this breaks the build here, not there, when they drift.
var (
	_ CoordinatorSource = (*coordinator.Coordinator)(nil)
	_ WorkerSource      = (*worker.Agent)(nil)
)
