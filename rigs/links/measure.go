package links

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/rigs/judge"
	"github.com/rdmamesh/rdmamesh/topology"
)

// DefaultMaxHeap is the heap a run may reach: under the shared machine's
// 16 GB for benchmarks, with room for the rest of the process.
const DefaultMaxHeap = 16_000_000_000

// checkHeap fails once the heap, plus what the next step allocates,
// would pass the limit. The planes are allocated whole and the analysis
// adds about a byte a cell, so checking before each plane, after every
// source's row and after the analysis keeps a run below it.
func checkHeap(cfg Config, plus uint64, doing string) error {
	limit := cfg.MaxHeap
	if limit == 0 {
		limit = DefaultMaxHeap
	}
	h := procstat.HeapObjects()
	if h+plus <= limit {
		return nil
	}
	// The count includes garbage the collector has not swept: a run's
	// analysis at 16,384 nodes leaves gigabytes of it, and the next run
	// would otherwise stop for the last one's leftovers.
	runtime.GC()
	if h = procstat.HeapObjects(); h+plus <= limit {
		return nil
	}
	return fmt.Errorf("%s on %s: the heap would reach %.2f GB, past the %.2f GB limit (Config.MaxHeap, -max-heap-gb); "+
		"run stopped: measure a smaller tree, or lower the limit of the other runs sharing the machine",
		doing, cfg.Tree, float64(h+plus)/1e9, float64(limit)/1e9)
}

// sweep measures every ordered pair of the faulted rail planes (planes of
// a rail-optimized tree share no link, so the others add cells and no
// evidence) and judges them with the topology.
func sweep(ctx context.Context, cfg Config, topo *topology.Topology, spec sim.PresetSpec, names []string, faults []injected, rails map[int]bool, seed int64, planned map[int][]steeredCell) (*matrix.Matrix, error) {
	specs := make([]string, len(faults))
	for i, f := range faults {
		specs[i] = f.spec
	}
	fs, err := sim.ParseFaults(specs)
	if err != nil {
		return nil, err
	}
	simCfg := sim.Config{Preset: cfg.Preset, Seed: seed, Faults: fs, Topology: topo}
	fab, err := sim.New(simCfg)
	if err != nil {
		return nil, err
	}
	nodes, err := judge.Nodes(ctx, fab, names)
	if err != nil {
		return nil, err
	}
	// The matrix judges every rail a node has a port on, measured or not,
	// and at 16,384 nodes each rail is 268 M cells to read. Ports past the
	// last measured rail go; those below it stay, Ports being indexed by
	// rail, and their planes are read as untested.
	spans := 0
	for r := range spec.HCAs {
		if rails[r] {
			spans = r + 1
		}
	}
	for i := range nodes {
		nodes[i].Ports = nodes[i].Ports[:min(len(nodes[i].Ports), spans)]
	}
	st := newStore(names, spec.HCAs, spec.Device)
	for rail := range spec.HCAs {
		if !rails[rail] {
			continue
		}
		n := len(names)
		rowLen := func(int) int { return n - 1 }
		if planned != nil {
			lens := rowLens(planned[rail], n)
			rowLen = func(i int) int { return lens[i] }
		}
		cells := n * (n - 1)
		if planned != nil {
			cells = len(planned[rail])
		}
		if err := checkHeap(cfg, planeBytes(n, cells), fmt.Sprintf("allocating rail %d's plane", rail)); err != nil {
			return nil, err
		}
		put := st.addPlane(rail, rowLen).put
		if planned != nil {
			err = measureCells(ctx, cfg, simCfg, names, rail, planned[rail], put)
		} else {
			err = measureRail(ctx, cfg, simCfg, names, rail, put)
		}
		if err != nil {
			return nil, err
		}
	}
	st.codeP50s()
	if err := checkHeap(cfg, analysisBytes(len(names), spans), "analysing"); err != nil {
		return nil, err
	}
	// Only the faulted planes were measured: the others are not untested.
	th := matrix.DefaultThresholds()
	th.TestedOnly = true
	th.SteeredLinks = planned != nil
	m := matrix.AnalyseOn(topo, nodes, st, nil, th)
	if err := checkHeap(cfg, 0, "analysing"); err != nil {
		return nil, err
	}
	return m, nil
}

// analysisBytes is what the matrix allocates to analyse the rails 0 to
// spans-1 of n nodes (matrix/README.md, Compact analysis): it reads every
// cell of each rail's N x N grid, measured or not, so a fabric sweep's
// few cells do not shrink it. Per grid cell of each rail about 6 bytes
// (its verdict byte, the coded p50's 2.25, localization's 2); for the
// largest rail its figures between the passes (17 bytes), the p99
// scratch (8) and 2 more; an eighth on top for localization, which grows
// with the bad cells. At 16,384 nodes one rail is 10 GB, eight 24.
// TestAnalysisBytes holds it to the matrix.
func analysisBytes(n, spans int) uint64 {
	grid := uint64(n) * uint64(n-1)
	return (uint64(spans)*grid*6 + grid*27) * 9 / 8
}

// fitPlanes is how many planes, from rail 0, faults may be put on so that
// a run's analysis stays under the heap limit. The matrix reads every
// rail up to the last measured one (analysisBytes), so at 16,384 nodes a
// fault on rail 7 costs eight rails: 18 GB. The planes of a generated
// fat tree are one tree under other names, so victims on the first
// planes sample the same faults; the table says how many planes took
// them (Row.Planes).
func fitPlanes(cfg Config, n, rails int, planned map[int][]steeredCell) (int, error) {
	limit := cfg.MaxHeap
	if limit == 0 {
		limit = DefaultMaxHeap
	}
	runtime.GC()
	base := procstat.HeapObjects()
	plane := 2 * planeBytes(n, n*(n-1)) // two faulted planes, every pair
	if planned != nil {
		plane = 0
		for _, cells := range planned {
			plane = max(plane, 2*planeBytes(n, len(cells)))
		}
	}
	for p := rails; p > 0; p-- {
		if base+plane+analysisBytes(n, p) <= limit {
			return p, nil
		}
	}
	if err := checkHeap(cfg, plane+analysisBytes(n, 1), "planning the runs"); err != nil {
		return 0, err
	}
	return 1, nil // it fits now, the garbage collected
}

// rowLens counts a rail's planned cells by source.
func rowLens(cells []steeredCell, n int) []int {
	lens := make([]int, n)
	for _, c := range cells {
		lens[c.src]++
	}
	return lens
}

// rowsPerFabric: each run of this many sources is measured in order on a
// fabric of its own. A node numbers its QPs, and so its flows' paths, in
// the order it opens them; rows sharing one fabric on several cores would
// leave that order, and the run's results, to the scheduler.
const rowsPerFabric = 32

// measureRail measures a rail's ordered pairs on every core and hands
// each cell to put, from one goroutine per source at a time. It stops
// after a source whose row leaves the heap past the limit, or when ctx
// ends.
func measureRail(ctx context.Context, cfg Config, simCfg sim.Config, names []string, rail int, put func(src, dst int, c *matrix.Cell)) error {
	return measureRows(ctx, cfg, simCfg, rail, len(names), func(fab *sim.Fabric, spec sim.PresetSpec, i int) {
		for j, d := range names {
			if j != i {
				c := judge.MeasureCell(ctx, fab, cfg.Params, spec, names[i], d, rail, 1)
				put(i, j, &c)
			}
		}
	})
}

// measureRows runs row(fab, spec, i) for rows 0..n-1 on every core,
// rowsPerFabric rows at a time on a fabric of their own, each row from
// one goroutine. It stops after a row that leaves the heap past the
// limit, or when ctx ends, and returns the first error.
func measureRows(ctx context.Context, cfg Config, simCfg sim.Config, rail, n int, row func(fab *sim.Fabric, spec sim.PresetSpec, i int)) error {
	spec, err := sim.Preset(simCfg.Preset)
	if err != nil {
		return err
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
				if lo >= n || stop(nil) {
					return
				}
				fab, err := sim.New(simCfg)
				if stop(err) {
					return
				}
				for i := lo; i < min(lo+rowsPerFabric, n); i++ {
					row(fab, spec, i)
					err := ctx.Err()
					if err == nil {
						err = checkHeap(cfg, 0, fmt.Sprintf("measuring rail %d", rail))
					}
					if stop(err) {
						return
					}
				}
			}
		})
	}
	wg.Wait()
	return first
}
