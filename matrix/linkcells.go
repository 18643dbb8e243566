package matrix

import (
	"container/heap"
	"context"
	"fmt"

	"github.com/rdmamesh/rdmamesh/topology"
)

// LinkCells is what crossed one cable of the topology: the same-rail tests
// whose paths (the data path by the cell's Flow, the return path of pongs
// and acknowledgements by its BackFlow) went over it in either direction,
// worst first. Untested cells ran no test and are left out.
type LinkCells struct {
	// Cable is the cable's index in the topology.
	Cable int `json:"cable"`
	// Ends are the cable's end A and end B as the topology names them
	// ("leaf-r0-01:6", "node-03/mlx5_0").
	Ends [2]string `json:"ends"`
	// Crossed counts the tests known to have crossed it, Counts the same by
	// path verdict.
	Crossed int             `json:"crossed"`
	Counts  map[Verdict]int `json:"counts"`
	// Unknown counts the tests that may have crossed it: RoCE cells without
	// a flow (0) whose ends have several equal paths, only some of them
	// over this cable. They are not guessed into Crossed.
	Unknown int `json:"unknown"`
	// Cells are the first of Crossed, failed, then low bandwidth, slow and
	// ok, each in cell order (rail, src, dst).
	Cells []LinkCell `json:"cells"`
}

// LinkCell is one test through the cable.
type LinkCell struct {
	Result
	// PathVerdict is the verdict of the measurement whose path is known:
	// the first. A retest opens new QPs, which on RoCE take other paths,
	// so a cell that retests cleared can still have been bad over this
	// cable. On a materialised matrix (Build, JSON) it is Verdict: the rail
	// statistics the first measurement would be judged by are not kept.
	PathVerdict Verdict `json:"path_verdict"`
	// Data and Return say which way the data path and the return path
	// crossed the cable: "ab" from end A to end B, "ba" back, "" not.
	Data   string `json:"data,omitempty"`
	Return string `json:"return,omitempty"`
}

// linkOrder ranks path verdicts, worst first, as the heatmap's status
// codes do.
var linkOrder = [...]Verdict{VerdictFailed, VerdictLowBandwidth, VerdictSlowLatency, VerdictOK}

// LinkCells lists the tests through cable c of t, at most limit of them
// (the counts cover all). It walks only the cells whose ends could route
// over c: the row and column of an HCA for its host cable, the leaves
// below the cable's lower switch for one between switches. t must be the
// topology the sweep ran on; nodes it lacks are left out.
//
// A core link of a 4,096-node fabric has millions of cells whose ends
// could route over it, each routed by its flows: seconds of work.
// LinkCells gives up with ctx's error when ctx ends (the browser that
// asked went away).
func (m *Matrix) LinkCells(ctx context.Context, t *topology.Topology, c, limit int) (LinkCells, error) {
	if t == nil {
		return LinkCells{}, fmt.Errorf("no topology to route the cells over")
	}
	if c < 0 || c >= len(t.Cables) {
		return LinkCells{}, fmt.Errorf("cable %d: the topology has cables 0..%d", c, len(t.Cables)-1)
	}
	cb := t.Cables[c]
	w := &linkWalk{ctx: ctx, m: m, t: t, cable: c, limit: max(limit, 0), hca: hcaIndex(m, t)}
	out := LinkCells{Cable: c, Ends: [2]string{t.EndName(cb.A), t.EndName(cb.B)}, Counts: map[Verdict]int{}}
	w.out = &out
	for i := range w.best {
		w.best[i] = &cellHeap{}
	}
	if h, host := hostHCA(cb); host {
		w.host(h, cb.A.IsHCA())
	} else {
		w.pairs(leafPairShares(t, c))
	}
	if err := ctx.Err(); err != nil {
		return LinkCells{}, err
	}
	out.Cells = w.list()
	return out, nil
}

// hostHCA is a host cable's HCA.
func hostHCA(cb topology.Cable) (hca int, ok bool) {
	switch {
	case cb.A.IsHCA():
		return cb.A.HCA, true
	case cb.B.IsHCA():
		return cb.B.HCA, true
	}
	return 0, false
}

// hcaIndex maps node*Rails+rail (m.Nodes order) to its topology HCA, -1
// when the topology lacks it.
func hcaIndex(m *Matrix, t *topology.Topology) []int32 {
	R := max(m.Rails, 0)
	out := make([]int32, len(m.Nodes)*R)
	for n, node := range m.Nodes {
		for r := range R {
			out[n*R+r] = -1
			if h, ok := t.HCA(node.Name, r); ok {
				out[n*R+r] = int32(h)
			}
		}
	}
	return out
}

type linkWalk struct {
	ctx   context.Context
	m     *Matrix
	t     *topology.Topology
	cable int
	limit int
	hca   []int32
	out   *LinkCells
	best  [len(linkOrder)]*cellHeap // per path verdict: the first cells, by k
	path  []topology.Link
}

// through is one cell found crossing the cable.
type through struct {
	k         int
	data, ret string
	path      Verdict
}

// add counts a crossing cell and keeps it if it is among the first.
func (w *linkWalk) add(x through) {
	w.out.Crossed++
	w.out.Counts[x.path]++
	for i, v := range linkOrder {
		if v != x.path {
			continue
		}
		h := w.best[i]
		if h.Len() < w.limit {
			heap.Push(h, x)
		} else if h.Len() > 0 && x.k < (*h)[0].k {
			(*h)[0] = x
			heap.Fix(h, 0)
		}
	}
}

// list is the kept cells, worst path verdict first, each in cell order.
func (w *linkWalk) list() []LinkCell {
	out := []LinkCell{}
	for _, h := range w.best {
		xs := make([]through, h.Len())
		for i := len(xs) - 1; i >= 0; i-- {
			xs[i] = heap.Pop(h).(through)
		}
		for _, x := range xs {
			if len(out) == w.limit {
				return out
			}
			out = append(out, LinkCell{Result: w.m.resultAt(x.k), PathVerdict: x.path, Data: x.data, Return: x.ret})
		}
	}
	return out
}

// resultAt is cell k of the whole sweep (of a BadOnly view's too).
func (m *Matrix) resultAt(k int) Result {
	if m.a == nil {
		return m.Cells[k]
	}
	var r Result
	m.a.fill(&r, k)
	return r
}

// way decides whether a path from HCA x to HCA y whose leaves share sh
// crosses the cable: the direction, "" when not, and unknown when a RoCE
// flow of 0 leaves the equal paths open.
func (w *linkWalk) way(sh linkShare, x, y int, flow uint16) (dir string, unknown bool) {
	switch {
	case sh.total() <= shareEps:
		return "", false
	case sh.total() >= 1-shareEps:
		if sh.ab >= sh.ba {
			return "ab", false
		}
		return "ba", false
	case flow == 0 && w.t.LinkLayer == topology.RoCE:
		return "", true
	}
	var ok bool
	w.path, ok = w.t.Route(w.path[:0], x, y, uint32(flow))
	if !ok {
		return "", true
	}
	for _, l := range w.path {
		if l.Cable() == w.cable {
			if l.Forward() {
				return "ab", false
			}
			return "ba", false
		}
	}
	return "", false
}

// cellHeap keeps the largest k on top, so the first limit cells stay.
type cellHeap []through

func (h cellHeap) Len() int           { return len(h) }
func (h cellHeap) Less(i, j int) bool { return h[i].k > h[j].k }
func (h cellHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cellHeap) Push(x any)        { *h = append(*h, x.(through)) }
func (h *cellHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
