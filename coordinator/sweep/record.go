package sweep

import (
	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// The types here are what the engine commits and reads back. The store
// replicates them as they are (their JSON tags are the log's format), so
// they live with the engine that defines their meaning, and the store
// depends on them rather than the other way round.

// RoundResult is one round's cells: one entry per round keeps the log
// small and makes a round land atomically.
type RoundResult struct {
	SweepID string        `json:"sweep_id"`
	Round   int           `json:"round"`
	Cells   []matrix.Cell `json:"cells,omitempty"` // JSON entries only
}

// RetestPlan fixes one confirmation pass's rounds before any of them runs,
// so a new leader resumes the same plan instead of re-deriving it from
// results that the pass itself has already changed.
type RetestPlan struct {
	SweepID string            `json:"sweep_id"`
	Pass    int               `json:"pass"`
	Rounds  []scheduler.Round `json:"rounds"`
	Pairs   int               `json:"pairs"`
}

// Record is what is committed of one sweep, as the engine reads it: a copy,
// safe to keep.
type Record struct {
	Info    api.SweepInfo
	Spec    Spec
	Nodes   []matrix.Node
	Rounds  map[int]bool       // committed rounds, by index
	Retests map[int]RetestPlan // committed confirmation plans, by pass (1..)
}
