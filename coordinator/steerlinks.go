package coordinator

import (
	"context"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/linkplan"
	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/topology"
)

// steerCandidates is how many flow labels each steered test may try: one
// of them leaves by the wanted up link of a leaf with U uplinks with
// chance 1-(1-1/U)^8 (96 % for U = 2 twice over, out and back).
const steerCandidates = 8

// steerTest is one direction of a steered pair on one rail: its ends,
// HCAs and candidate labels, and where its label is kept in the plan.
type steerTest struct {
	src, dst string
	hs, hd   int
	rail     int
	cands    []uint32
	label    *uint32
}

// SteerLinks implements sweep.LinkSteerer. The plan chose each test's
// flow label by the topology's model of the switches' hash; a real
// fabric's hash is the vendor's. Before the first round, each source
// traces its tests' candidate labels; for each test the first candidate
// whose trace leaves and reaches the leaves over the cables the plan
// meant is chosen (else the planned one), and its trace committed. Then,
// on every leader, each test takes the candidate whose committed trace
// it finds. It runs on a RoCE topology whose switches have addresses,
// with tracing on; elsewhere the plan's labels stand.
func (c *Coordinator) SteerLinks(ctx context.Context, id string, plan *linkplan.Plan, fresh bool) {
	topo := c.SweepTopology(id)
	if c.opts.SkipTrace || topo == nil || topo.LinkLayer != topology.RoCE || !topo.HasAddrs() {
		return
	}
	tests := steerTests(topo, plan)
	if len(tests) == 0 {
		return
	}
	if fresh {
		c.traceCandidates(ctx, id, topo, tests)
	}
	chosen := map[flowKey]int{}
	for _, f := range c.fsm.Paths(id) {
		if !f.Back {
			chosen[flowKey{f.Src, f.Dst, f.Rail, 0}] = f.Flow
		}
	}
	moved := 0
	for _, t := range tests {
		if l, ok := linkplan.LabelOf(chosen[flowKey{t.src, t.dst, t.rail, 0}], t.cands); ok && l != *t.label {
			*t.label = l
			moved++
		}
	}
	c.log.Info("link sweep steered by traces", "sweep", id, "tests", len(tests), "relabelled", moved)
}

// steerTests lists both directions of every steered pair's rails.
func steerTests(topo *topology.Topology, plan *linkplan.Plan) []steerTest {
	var out []steerTest
	for i, p := range plan.Pairs {
		for k := range plan.Steer[i] {
			rf := &plan.Steer[i][k]
			ha, ok1 := topo.HCA(p.A, rf.Rail)
			hb, ok2 := topo.HCA(p.B, rf.Rail)
			if !ok1 || !ok2 {
				continue
			}
			if rf.A != 0 {
				out = append(out, steerTest{p.A, p.B, ha, hb, rf.Rail, linkplan.Candidates(rf.A, steerCandidates), &rf.A})
			}
			if rf.B != 0 {
				out = append(out, steerTest{p.B, p.A, hb, ha, rf.Rail, linkplan.Candidates(rf.B, steerCandidates), &rf.B})
			}
		}
	}
	return out
}

// traceCandidates traces every candidate of every test from its source,
// chooses, and commits the chosen candidates' traces.
func (c *Coordinator) traceCandidates(ctx context.Context, id string, topo *topology.Topology, tests []steerTest) {
	m, ok := c.freshMatrix(id)
	if !ok {
		return
	}
	var cells []traceCell
	for _, t := range tests {
		for _, l := range t.cands {
			cells = append(cells, traceCell{src: t.src, dst: t.dst, rail: t.rail, flow: linkplan.Sport(l)})
		}
	}
	ctx, cancel := context.WithTimeout(ctx, tracePhaseBound)
	defer cancel()
	start := time.Now()
	traced := map[flowKey]wire.FlowPath{}
	for _, f := range c.traceCells(ctx, m, cells) {
		traced[flowKey{f.Src, f.Dst, f.Rail, f.Flow}] = f
	}
	var keep []wire.FlowPath
	onPlan := 0
	for _, t := range tests {
		f, hit := chooseCandidate(topo, t, traced)
		if f.Flow == 0 {
			continue // nothing traced: the planned label stands
		}
		if hit {
			onPlan++
		}
		keep = append(keep, f)
	}
	if len(keep) == 0 {
		return
	}
	if err := c.apply(store.EncodePaths(&wire.SweepPaths{SweepID: id, Flows: keep})); err != nil {
		c.log.Warn("cannot commit the link sweep's steering traces; its tests keep the planned labels", "sweep", id, "err", err)
		return
	}
	c.log.Info("traced the link sweep's candidate flows", "sweep", id, "tests", len(tests), "flows", len(cells),
		"on_the_planned_cables", onPlan, "took", time.Since(start).Round(time.Millisecond))
}

// chooseCandidate is the first candidate of t whose trace maps onto the
// topology over the leaf cables the plan meant (hit), else the planned
// label's trace; a zero FlowPath when that was not traced either.
func chooseCandidate(topo *topology.Topology, t steerTest, traced map[flowKey]wire.FlowPath) (wire.FlowPath, bool) {
	first, last, ok := linkplan.Intended(topo, t.hs, t.hd, *t.label)
	if ok {
		for _, l := range t.cands {
			f, found := traced[flowKey{t.src, t.dst, t.rail, int(linkplan.Sport(l))}]
			if !found || len(f.Hops) == 0 {
				continue
			}
			p, err := topo.PathFromHops(nil, t.hs, t.hd, hopAddrs(nil, f.Hops))
			if err != nil {
				continue
			}
			if a, z, ok := linkplan.Ends(p); ok && a == first && z == last {
				return f, true
			}
		}
	}
	f := traced[flowKey{t.src, t.dst, t.rail, int(linkplan.Sport(*t.label))}]
	if len(f.Hops) == 0 {
		return wire.FlowPath{}, false
	}
	return f, false
}
