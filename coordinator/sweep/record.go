package sweep

import (
	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// The types here are what the engine commits and reads back. They live
// with the engine that defines their meaning; the store depends on them
// rather than the other way round, and records them in internal/wire's
// log types, converting at its boundary.

// RoundResult is one round's cells: one entry per round keeps the log
// small and makes a round land atomically.
type RoundResult struct {
	SweepID string
	Round   int
	Cells   []matrix.Cell
	// Lite are the round's plain cells (LiteCell) besides Cells, and Nodes
	// the sweep's nodes their indices point into (the start record's).
	Lite  []LiteCell
	Nodes []matrix.Node
}

// RetestPlan fixes one confirmation pass's rounds before any of them runs,
// so a new leader resumes the same plan instead of re-deriving it from
// results that the pass itself has already changed.
type RetestPlan struct {
	SweepID string
	Pass    int
	Rounds  []scheduler.Round
	Pairs   int
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
