package store

import (
	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// EncodeRound is a round's entry. Cells on x's grid (same rail, the
// sweep's own nodes and devices; see NodeIndex.indices) go in grid form,
// node indices and quant codes; the rest go whole. x nil: every cell whole.
func EncodeRound(x *NodeIndex, r sweep.RoundResult) ([]byte, error) {
	return roundEncoder(x, r).Finish(roundHead)
}

// EncodeOwnRound is EncodeRound for the entry this replica proposes itself
// with raft.Apply: applying exactly that slice takes the codes the encoder
// kept (kept.go) instead of decoding them again.
func (f *FSM) EncodeOwnRound(x *NodeIndex, r sweep.RoundResult) ([]byte, error) {
	e, rc, err := roundEncoder(x, r).FinishKeep(roundHead)
	if err != nil {
		return nil, err
	}
	f.kept.add(e[1:], rc) // what Apply hands applyRound
	return e, nil
}

// roundHead is what a round entry starts with, before the round itself.
var roundHead = []byte{byte(EntryRound)}

// roundEncoder holds a round's cells, ready to finish: its lite cells
// first, placed by their indices when x lists the same nodes, then the
// rest.
func roundEncoder(x *NodeIndex, r sweep.RoundResult) *wire.RoundEncoder {
	enc := wire.NewRoundEncoder(r.SweepID, r.Round)
	grid := x != nil && x.lists(r.Nodes)
	for i := range r.Lite {
		l := &r.Lite[i]
		if grid && int(l.Rail) < x.rails && enc.Grid(&wire.GridCell{Src: int(l.Src), Dst: int(l.Dst), Rail: int(l.Rail), Round: r.Round,
			Class: probe.ClassOK, LatQ: (*wire.LatQ)(&l.Codes), Samples: l.Samples, Flow: l.Flow, BackFlow: l.BackFlow}) {
			continue
		}
		c := liteCell(&r, l)
		enc.Whole(&c)
	}
	var memo idxMemo
	figs := wire.UnquantTable()
	for i := range r.Cells {
		mc := &r.Cells[i]
		if x != nil && len(mc.Retests) == 0 {
			if si, di, ok := x.place(mc.Src, mc.Dst, mc.SrcDevice, mc.DstDevice, mc.Rail, mc.DstRail, mc.Round, mc.Latency, &memo); ok &&
				enc.Grid(&wire.GridCell{Src: int(si), Dst: int(di), Rail: mc.Rail, Round: mc.Round, Class: mc.Class, Error: mc.Error,
					Latency: mc.Latency, Bandwidth: mc.Bandwidth, LatQ: workersCodes(mc, figs), Flow: mc.Flow,
					BackFlow: mc.BackFlow}) {
				continue
			}
		}
		c := cellIn(mc)
		enc.Whole(&c)
	}
	return enc
}

// liteCell is l as a whole cell, for a round whose lite cells cannot go
// in grid form.
func liteCell(r *sweep.RoundResult, l *sweep.LiteCell) wire.Cell {
	src, dst, rail := &r.Nodes[l.Src], &r.Nodes[l.Dst], int(l.Rail)
	lat := wire.LatQ(l.Codes).Latency(l.Samples)
	return wire.Cell{Src: src.Name, Dst: dst.Name, Rail: rail, SrcDevice: src.Ports[rail].Device, DstDevice: dst.Ports[rail].Device,
		Round: r.Round, Class: probe.ClassOK, Latency: &lat, Flow: l.Flow, BackFlow: l.BackFlow}
}

// workersCodes is c's latency as its worker's codes, when it has them and
// they are its figures' still (figs: wire.UnquantTable): a cell whose
// latency was replaced after the answer (and its codes not cleared) has
// its figures quantised.
func workersCodes(c *matrix.Cell, figs *[1 << 16]float64) *wire.LatQ {
	q := (*wire.LatQ)(c.LatencyCodes)
	if q == nil || c.Latency == nil || figs[q[1]] != c.Latency.P50Ns {
		return nil
	}
	return q
}

// applyRound applies a round entry. Main-round grid cells go straight into
// the sweep's grid as codes, without building a cell value each;
// confirmation rounds, which merge attempts, and cells kept whole take the
// general path.
func (f *FSM) applyRound(b []byte) error {
	if rc := f.kept.take(b); rc != nil {
		defer rc.Release()
		return f.applyCells(rc)
	}
	r, err := wire.ReadRound(b)
	if err != nil {
		return err
	}
	defer r.Release()
	return f.applyCells(r)
}

// roundContent is a round entry's content, decoded (wire.RoundReader) or
// kept by this replica's encoder (wire.RoundCodes).
type roundContent interface {
	Head() *wire.RoundHead
	Next(*wire.GridCodes) error
}

func (f *FSM) applyCells(rc roundContent) error {
	r := rc.Head()
	f.mu.Lock()
	defer f.mu.Unlock()
	rec, ok := f.sweeps[r.SweepID]
	if !ok || rec.Rounds[r.Round] {
		return nil // aged out, or a round re-run by a new leader
	}
	retest := rec.isRetestRound(r.Round)
	st := rec.Cells
	general := retest
	classes := make([]uint8, len(r.Classes))
	for i, c := range r.Classes {
		code, ok := st.classOf(c)
		classes[i], general = code, general || !ok
	}
	errs := make([]uint16, len(r.Errors)+1)
	for i := range r.Errors {
		code, ok := st.errOf(&r.Errors[i])
		errs[i+1], general = code, general || !ok
	}
	var c wire.GridCodes
	for range r.Cells {
		if err := rc.Next(&c); err != nil {
			return err
		}
		// Next checked each field against its width; these are the sweep's.
		src, dst, rail := int(c.Src), int(c.Dst), int(c.Rail)
		if src >= st.n || dst >= st.n || src == dst || rail >= st.rails {
			return wire.ErrCorruptRound
		}
		if general {
			rec.merge(st.wholeCell(r, &c), retest)
			continue
		}
		var lat *wire.LatQ
		if c.Meta&flagLat != 0 {
			lat = &c.Lat
		}
		var bw *wire.BWQ
		if c.Meta&flagBW != 0 {
			bw = &c.BW
		}
		slot := st.slot(src, dst, rail)
		st.putDense(slot, classes[c.Meta&classMask], c.Round, lat, c.Samples, bw, errs[c.Err], c.Flow, c.BackFlow)
		st.setRetests(slot, nil)
	}
	for _, c := range r.Whole {
		rec.merge(c, retest)
	}
	f.roundDone(rec, r.Round, retest)
	return nil
}

// wholeCell turns a decoded grid cell (its indices checked) into a cell
// against the sweep's nodes.
func (s *NodeIndex) wholeCell(r *wire.RoundHead, c *wire.GridCodes) wire.Cell {
	src, dst := &s.nodes[c.Src], &s.nodes[c.Dst]
	rail := int(c.Rail)
	out := wire.Cell{Src: src.Name, Dst: dst.Name, Rail: rail, SrcDevice: portDevice(src, rail), DstDevice: portDevice(dst, rail),
		Round: int(c.Round), Class: r.Classes[c.Meta&classMask], Flow: c.Flow, BackFlow: c.BackFlow}
	if c.Err > 0 {
		out.Error = new(r.Errors[c.Err-1])
	}
	if c.Meta&flagLat != 0 {
		out.Latency = new(c.Lat.Latency(c.Samples))
	}
	if c.Meta&flagBW != 0 {
		out.Bandwidth = new(c.BW.Bandwidth())
	}
	return out
}
