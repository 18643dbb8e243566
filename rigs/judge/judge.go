// Package judge measures how well the matrix judges a fabric: seeded
// sweeps of the simulated fabric, clean and with each of the demo's fault
// classes at several strengths, on a quiet preset and on the noisy one the
// lab calibrates, each measured cell by cell as a worker measures it,
// confirmed by the sweep engine's retest passes and judged by the matrix
// with the shipped thresholds. Per case it counts the runs whose exclude
// list named the broken node (recall) and those that named a healthy one
// (a precision failure). It has no production code; `make bench-judge`
// prints its table.
package judge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// Case is one fault at one strength, or none.
type Case struct {
	Name string
	// Fault is the fault spec on the victim ("" for a clean fabric);
	// {node} is the victim's name and {hca} its first HCA.
	Fault string
	// Hard: the fault fails cells outright; otherwise it only slows them.
	Hard bool
	// Factor is how many times worse the fault makes its cells (a
	// performance fault's strength), 0 when it is no performance fault.
	Factor float64
}

// Cases are the demo's fault classes at the strengths the table reports.
func Cases() []Case {
	return []Case{
		{Name: "clean"},
		{Name: "hca down", Fault: "{node}/{hca}:down", Hard: true},
		{Name: "node dead", Fault: "{node}:dead", Hard: true},
		{Name: "gid wrong", Fault: "{node}/{hca}:gid=wrong", Hard: true},
		{Name: "loss 100%", Fault: "{node}/{hca}:loss=100%", Hard: true},
		{Name: "loss 30%", Fault: "{node}/{hca}:loss=30%", Hard: true},
		{Name: "egress loss 30%", Fault: "{node}/{hca}:loss=30%@egress", Hard: true},
		{Name: "bw /2", Fault: "{node}/{hca}:bw=0.5", Factor: 2},
		{Name: "bw /3", Fault: "{node}/{hca}:bw=0.333", Factor: 3},
		{Name: "bw /5", Fault: "{node}/{hca}:bw=0.2", Factor: 5},
		{Name: "egress bw /3", Fault: "{node}/{hca}:bw=0.333@egress", Factor: 3},
		{Name: "egress bw /5", Fault: "{node}/{hca}:bw=0.2@egress", Factor: 5},
		{Name: "lat x2", Fault: "{node}/{hca}:lat=2x", Factor: 2},
		{Name: "lat x3", Fault: "{node}/{hca}:lat=3x", Factor: 3},
		{Name: "lat x5", Fault: "{node}/{hca}:lat=5x", Factor: 5},
	}
}

// Config of one measurement: a preset, a fabric size and the runs per case.
type Config struct {
	Preset  string
	Nodes   int
	Runs    int
	Retests int // confirmation passes, as sweep.retests (2 shipped)
	Seed    int64
	Params  probe.TestParams
}

// Row is one case's tally.
type Row struct {
	Case
	Runs int
	// Found: the victim was excluded; Wrong: a healthy node was excluded;
	// First: the first suspect named the victim.
	Found, Wrong, First int
	// Exits counts the gate's outcome per run.
	Exits map[matrix.Outcome]int
}

// victim is the node every fault strikes.
const victim = "node-02"

// Measure runs every case cfg.Runs times.
func Measure(ctx context.Context, cfg Config, cases []Case) ([]Row, error) {
	spec, err := sim.Preset(cfg.Preset)
	if err != nil {
		return nil, err
	}
	names := make([]string, cfg.Nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%02d", i+1)
	}
	rows := make([]Row, len(cases))
	for ci, c := range cases {
		rows[ci] = Row{Case: c, Exits: map[matrix.Outcome]int{}}
		for run := range cfg.Runs {
			seed := cfg.Seed + int64(ci)*1_000_003 + int64(run)
			m, err := sweepOnce(ctx, cfg, spec, names, c, seed)
			if err != nil {
				return nil, fmt.Errorf("%s run %d: %w", c.Name, run, err)
			}
			rows[ci].add(m)
		}
	}
	return rows, nil
}

func (r *Row) add(m *matrix.Matrix) {
	r.Runs++
	ex := m.Excluded(matrix.ExcludeOptions{})
	if r.Fault != "" && slices.Contains(ex, victim) {
		r.Found++
	}
	for _, n := range ex {
		if n != victim || r.Fault == "" {
			r.Wrong++
			break
		}
	}
	if r.Fault != "" && len(m.Suspects) > 0 && m.Suspects[0].Node == victim {
		r.First++
	}
	r.Exits[m.Outcome()]++
}

// sweepOnce measures every ordered pair on every rail, confirms what the
// matrix wants confirmed, and returns the judged matrix.
func sweepOnce(ctx context.Context, cfg Config, spec sim.PresetSpec, names []string, c Case, seed int64) (*matrix.Matrix, error) {
	var faults []sim.Fault
	if c.Fault != "" {
		f, err := sim.ParseFault(strings.NewReplacer("{node}", victim, "{hca}", spec.Device(0)).Replace(c.Fault))
		if err != nil {
			return nil, err
		}
		faults = []sim.Fault{f}
	}
	fab, err := sim.New(sim.Config{Preset: cfg.Preset, Seed: seed, Faults: faults})
	if err != nil {
		return nil, err
	}
	nodes, err := Nodes(ctx, fab, names)
	if err != nil {
		return nil, err
	}
	var cells []matrix.Cell
	index := map[[3]any]int{}
	for rail := range spec.HCAs {
		for _, s := range names {
			for _, d := range names {
				if s != d {
					index[[3]any{s, d, rail}] = len(cells)
					cells = append(cells, MeasureCell(ctx, fab, cfg.Params, spec, s, d, rail, 1))
				}
			}
		}
	}
	th := matrix.DefaultThresholds()
	m := matrix.Build(nodes, cells, th)
	for pass := 1; pass <= cfg.Retests; pass++ {
		pairs := sweep.RetestPairs(m, pass)
		if len(pairs) == 0 {
			break
		}
		for _, p := range pairs {
			for rail := range spec.HCAs {
				for _, sd := range [][2]string{{p.A, p.B}, {p.B, p.A}} {
					k, ok := index[[3]any{sd[0], sd[1], rail}]
					if !ok {
						continue
					}
					a := MeasureCell(ctx, fab, cfg.Params, spec, sd[0], sd[1], rail, 1+pass)
					cells[k].Retests = append(cells[k].Retests, matrix.Attempt{Round: a.Round, Class: a.Class, Error: a.Error,
						Latency: a.Latency, Bandwidth: a.Bandwidth})
				}
			}
		}
		m = matrix.Build(nodes, cells, th)
	}
	return m, nil
}

// MeasureCell runs one cell as a worker does: both ends open and connect,
// the responder answers, the initiator runs latency then bandwidth, and
// the cell keeps the initiator QP's flow. A dead worker's cells are lost
// peers, as the coordinator records them.
func MeasureCell(ctx context.Context, fab *sim.Fabric, p probe.TestParams, spec sim.PresetSpec, src, dst string, rail, round int) matrix.Cell {
	return MeasureSteered(ctx, fab, p, spec, src, dst, rail, round, 0, 0)
}

// MeasureSteered is MeasureCell with the flow labels each end's QP sends
// with (a link sweep's steering; 0: the QP number picks the port).
func MeasureSteered(ctx context.Context, fab *sim.Fabric, p probe.TestParams, spec sim.PresetSpec, src, dst string, rail, round int, srcLabel, dstLabel uint32) matrix.Cell {
	c := matrix.Cell{Src: src, Dst: dst, Rail: rail, SrcDevice: spec.Device(rail), DstDevice: spec.Device(rail), Round: round}
	fail := func(err error) matrix.Cell {
		var pe *probe.Error
		if !errors.As(err, &pe) {
			pe = &probe.Error{Class: probe.ClassInternal, Cause: err.Error()}
		}
		c.Class, c.Error, c.Latency, c.Bandwidth = pe.Class, pe, nil, nil
		return c
	}
	for _, n := range []string{src, dst} {
		if fab.Dead(n) {
			return fail(&probe.Error{Class: probe.ClassPeerLost, Cause: "gossip declared worker " + n + " dead during the test"})
		}
	}
	ep := probe.Endpoint{Device: spec.Device(rail), Port: 1, GIDIndex: spec.GIDIndex, FlowLabel: srcLabel}
	ini, err := fab.Node(src).Open(ctx, ep, p)
	if err != nil {
		return fail(err)
	}
	defer ini.Close()
	c.Flow = ini.Info().UDPSport
	ep.FlowLabel = dstLabel
	resp, err := fab.Node(dst).Open(ctx, ep, p)
	if err != nil {
		return fail(err)
	}
	defer resp.Close()
	c.BackFlow = resp.Info().UDPSport
	if err := resp.Connect(ctx, ini.Info()); err != nil {
		return fail(err)
	}
	if err := resp.Respond(ctx, p); err != nil {
		return fail(err)
	}
	if err := ini.Connect(ctx, resp.Info()); err != nil {
		return fail(err)
	}
	lat, err := ini.Latency(ctx, p)
	if err != nil {
		return fail(err)
	}
	bw, err := ini.Bandwidth(ctx, p)
	if err != nil {
		return fail(err)
	}
	c.Class, c.Latency, c.Bandwidth = probe.ClassOK, &lat, &bw
	return c
}

// Nodes is the inventory the matrix reads for the simulated nodes, each
// alive unless a fault killed its worker.
func Nodes(ctx context.Context, fab *sim.Fabric, names []string) ([]matrix.Node, error) {
	nodes := make([]matrix.Node, len(names))
	for i, n := range names {
		ports, err := fab.Node(n).Ports(ctx)
		if err != nil {
			return nil, err
		}
		state := "alive"
		if fab.Dead(n) {
			state = "dead"
		}
		nodes[i] = matrix.Node{Name: n, State: state, Ports: ports}
	}
	return nodes, nil
}
