package links

import (
	"context"
	"slices"

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

// measureCells measures a rail's planned cells (sorted by source) as
// measureRail measures its pairs: a row a source, each row's cells from
// one goroutine, in order.
func measureCells(ctx context.Context, cfg Config, simCfg sim.Config, names []string, rail int, cells []steeredCell, put func(src, dst int, c *matrix.Cell)) error {
	var rows [][]steeredCell // by source
	for i := 0; i < len(cells); {
		j := i
		for j < len(cells) && cells[j].src == cells[i].src {
			j++
		}
		rows = append(rows, cells[i:j])
		i = j
	}
	return measureRows(ctx, cfg, simCfg, rail, len(rows), func(fab *sim.Fabric, spec sim.PresetSpec, i int) {
		for _, sc := range rows[i] {
			c := judge.MeasureSteered(ctx, fab, cfg.Params, spec, names[sc.src], names[sc.dst], rail, 1, sc.srcLabel, sc.dstLabel)
			put(sc.src, sc.dst, &c)
		}
	})
}
