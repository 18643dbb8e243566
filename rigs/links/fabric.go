package links

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rdmamesh/rdmamesh/coordinator/linkplan"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/rigs/judge"
	"github.com/rdmamesh/rdmamesh/topology"
)

// PatternFabric measures what a `fabric` sweep measures instead of every
// ordered pair: every pair inside each leaf group and the link plan's
// steered tests (coordinator/linkplan), both ways.
const PatternFabric = "fabric"

// steeredCell is one directional test of a fabric sweep: its ends (node
// indices) and each end's flow label.
type steeredCell struct {
	src, dst           int
	srcLabel, dstLabel uint32
}

// fabricCells plans a fabric sweep of the tree over names once, for every
// run: per rail, the cells it measures.
func fabricCells(topo *topology.Topology, names []string, rails int) (map[int][]steeredCell, error) {
	index := make(map[string]int, len(names))
	members := make([]linkplan.Member, len(names))
	for i, n := range names {
		index[n] = i
		members[i].Name = n
		for r := range rails {
			members[i].Rails = append(members[i].Rails, r)
		}
	}
	plan, err := linkplan.Links(topo, members)
	if err != nil {
		return nil, err
	}
	out := map[int][]steeredCell{}
	for r := range rails {
		byLeaf := map[int][]int{}
		for i, n := range names {
			if h, ok := topo.HCA(n, r); ok {
				byLeaf[topo.LeafOf(h)] = append(byLeaf[topo.LeafOf(h)], i)
			}
		}
		for _, group := range byLeaf {
			for _, a := range group {
				for _, b := range group {
					if a != b {
						out[r] = append(out[r], steeredCell{src: a, dst: b})
					}
				}
			}
		}
	}
	for i, p := range plan.Pairs {
		a, b := index[p.A], index[p.B]
		for _, rf := range plan.Steer[i] {
			out[rf.Rail] = append(out[rf.Rail], steeredCell{a, b, rf.A, rf.B}, steeredCell{b, a, rf.B, rf.A})
		}
	}
	for r := range out {
		sortCells(out[r])
	}
	return out, nil
}

func sortCells(cs []steeredCell) {
	// By source then destination: the order a fabric's QPs are opened in
	// must not depend on map iteration.
	slices.SortFunc(cs, func(x, y steeredCell) int {
		if x.src != y.src {
			return x.src - y.src
		}
		return x.dst - y.dst
	})
}

// measureCells measures a rail's planned cells (sorted by source) on
// every core, rowsPerFabric sources at a time on a fabric of their own,
// as measureRail does: each source's cells have one writer, in order.
func measureCells(ctx context.Context, cfg Config, simCfg sim.Config, names []string, rail int, cells []steeredCell, put func(src, dst int, c *matrix.Cell)) error {
	spec, err := sim.Preset(simCfg.Preset)
	if err != nil {
		return err
	}
	var rows [][]steeredCell // by source
	for i := 0; i < len(cells); {
		j := i
		for j < len(cells) && cells[j].src == cells[i].src {
			j++
		}
		rows = append(rows, cells[i:j])
		i = j
	}
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		mu    sync.Mutex
		first error
	)
	stop := func(err error) bool {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
		return first != nil
	}
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				lo := int(next.Add(1)-1) * rowsPerFabric
				if lo >= len(rows) || stop(nil) {
					return
				}
				fab, err := sim.New(simCfg)
				if stop(err) {
					return
				}
				for _, row := range rows[lo:min(lo+rowsPerFabric, len(rows))] {
					for _, sc := range row {
						c := judge.MeasureSteered(ctx, fab, cfg.Params, spec, names[sc.src], names[sc.dst], rail, 1, sc.srcLabel, sc.dstLabel)
						put(sc.src, sc.dst, &c)
					}
				}
				err = ctx.Err()
				if err == nil {
					err = checkHeap(cfg, 0, fmt.Sprintf("measuring rail %d", rail))
				}
				if stop(err) {
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
