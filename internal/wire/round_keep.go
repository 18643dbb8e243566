package wire

import (
	"sync"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// RoundHead is what a round entry holds besides its grid cells: the same
// whether it was decoded (RoundReader) or kept by its encoder (RoundCodes).
type RoundHead struct {
	SweepID string
	Round   int
	Cells   int // grid cells
	Classes []probe.Class
	Errors  []probe.Error
	Whole   []Cell
}

// Head lets RoundReader and RoundCodes be read through one interface.
func (h *RoundHead) Head() *RoundHead { return h }

// RoundCodes is a round entry as its encoder had it, equal to what
// ReadRound and Next decode from the entry's bytes. The raft leader applies
// its own entries from it: inflating and decoding the columns was most of
// a leader's apply, to get back codes it had just encoded.
type RoundCodes struct {
	RoundHead
	Grid []GridCodes // as Next returns them, in entry order
	next int
}

// roundCodes recycles RoundCodes with their Grid buffers (a 1,024-node
// round is about 700 KB of GridCodes), one round after another.
var roundCodes = sync.Pool{New: func() any { return new(RoundCodes) }}

// Next hands out the following grid cell, as RoundReader.Next does.
func (rc *RoundCodes) Next(c *GridCodes) error {
	if rc.next >= len(rc.Grid) {
		return ErrCorruptRound
	}
	*c = rc.Grid[rc.next]
	rc.next++
	return nil
}

// Release hands the buffers back; rc must not be used afterwards. Whole is
// not reused: its cells are the applier's to keep.
func (rc *RoundCodes) Release() {
	rc.Whole = nil
	roundCodes.Put(rc)
}

// FinishKeep is Finish that also returns the entry's content as RoundCodes
// (the bytes are Finish's, to the byte).
func (e *RoundEncoder) FinishKeep(head []byte) ([]byte, *RoundCodes, error) {
	rc := roundCodes.Get().(*RoundCodes)
	rc.SweepID, rc.Round, rc.Cells, rc.next = e.sweepID, e.round, e.cells, 0
	// Copies, not the encoder's own: the encoder goes back to its pool.
	rc.Classes = append(rc.Classes[:0], e.classList...)
	rc.Errors = append(rc.Errors[:0], e.errList...)
	rc.Grid, e.codes = e.codes, rc.Grid[:0]
	rc.Whole = cloneCells(e.whole)
	b, err := e.Finish(head)
	if err != nil {
		rc.Release()
		return nil, nil, err
	}
	return b, rc, nil
}

// cloneCells copies cells down to their figures, as decoding them would:
// the caller's cells may change after the entry is made, the kept ones
// must not.
func cloneCells(cs []Cell) []Cell {
	if len(cs) == 0 {
		return nil
	}
	out := make([]Cell, len(cs))
	for i := range cs {
		c := cs[i]
		c.DstRail, c.Error, c.Latency, c.Bandwidth = clonePtr(c.DstRail), clonePtr(c.Error), clonePtr(c.Latency), clonePtr(c.Bandwidth)
		if c.Retests != nil {
			c.Retests = make([]Attempt, len(cs[i].Retests))
			for j, a := range cs[i].Retests {
				a.Error, a.Latency, a.Bandwidth = clonePtr(a.Error), clonePtr(a.Latency), clonePtr(a.Bandwidth)
				c.Retests[j] = a
			}
		}
		out[i] = c
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return new(*p)
}
