package coordinator

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// After a sweep's rounds the leader has its cells' flows traced: the
// initiator's worker traces the data flow, the target's the responder's,
// each with the test's 5-tuple. The hops are committed (store.EntryPaths)
// and the analysis routes those cells over them. Only a RoCE topology
// whose switches have addresses can map a hop to a switch; elsewhere
// nothing is traced.

// Bounds of the trace phase: the cells traced (every cell between leaves
// up to it; beyond, the bad ones first and an even sample of the rest),
// the flows of one request (the worker's limit), the workers asked at once
// and the whole phase's time.
const (
	maxTracedCells  = 1024
	traceBatch      = 64
	traceWorkers    = 8
	tracePhaseBound = 3 * time.Minute
)

// traceCell is one cell whose flows are traced.
type traceCell struct {
	src, dst string
	rail     int
	flow     uint16
	back     uint16
	// loss: its flows' hops are probed for loss too (hoploss.go).
	loss bool
	// gbps and p50 are its figures (0: none), for markOutliers.
	gbps, p50 float64
}

// TracePaths traces sweep id's flows and commits their paths. Errors are
// logged, never the sweep's: a path not traced is a cell left to the
// model, or out of the link scan.
func (c *Coordinator) TracePaths(ctx context.Context, id string) {
	topo := c.SweepTopology(id)
	if c.opts.SkipTrace || topo == nil || topo.LinkLayer != topology.RoCE || !topo.HasAddrs() {
		return
	}
	m, ok := c.freshMatrix(id)
	if !ok {
		return
	}
	cells := pickTraceCells(m, topo)
	if len(cells) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, tracePhaseBound)
	defer cancel()
	start := time.Now()
	flows := c.traceCells(ctx, m, cells)
	if len(flows) == 0 {
		return
	}
	if err := c.apply(store.EncodePaths(&wire.SweepPaths{SweepID: id, Flows: flows})); err != nil {
		c.log.Warn("cannot commit the traced paths", "sweep", id, "err", err)
		return
	}
	tr, why := c.tracedOf(topo, flows)
	c.log.Info("traced the sweep's flows", "sweep", id, "cells", len(cells), "flows", len(flows), "mapped", tr.Len(),
		"took", time.Since(start).Round(time.Millisecond))
	if tr.Len() == 0 {
		c.log.Warn("no traced flow maps onto the topology, so the cells are routed by the model of ECMP", "sweep", id,
			"first", why)
	}
}

// pickTraceCells chooses the measured cells between leaves that carry
// their flow: every one up to maxTracedCells, beyond it the bad ones
// first and an even sample of the rest. It reads each cell's verdict (a
// byte of the compact analysis) and builds only the candidates, so a
// sweep of a hundred million cells costs a pass over bytes.
func pickTraceCells(m *matrix.Matrix, topo *topology.Topology) []traceCell {
	n := m.NumCells()
	var bad, good []int
	step, seen := 1, 0 // good keeps every step-th good cell: evenly apart however many
	for k := range n {
		switch m.VerdictAt(k) {
		case matrix.VerdictUntested:
		case matrix.VerdictOK:
			if seen%step == 0 {
				good = append(good, k)
			}
			seen++
		default:
			bad = append(bad, k)
		}
		if len(good) > 8*maxTracedCells {
			good, step = halve(good), 2*step
		}
	}
	var out []traceCell
	take := func(ks []int, room int) {
		for _, k := range ks {
			if len(out) >= room {
				return
			}
			r := m.CellAt(k)
			hs, ok1 := topo.HCA(r.Src, r.Rail)
			hd, ok2 := topo.HCA(r.Dst, r.Rail)
			if r.Flow == 0 || !ok1 || !ok2 || topo.LeafOf(hs) == topo.LeafOf(hd) {
				continue
			}
			tc := traceCell{src: r.Src, dst: r.Dst, rail: r.Rail, flow: r.Flow, back: r.BackFlow}
			if r.Bandwidth != nil {
				tc.gbps = r.Bandwidth.Gbps
			}
			if r.Latency != nil {
				tc.p50 = r.Latency.P50Ns
			}
			out = append(out, tc)
		}
	}
	take(bad, max(maxTracedCells/2, maxTracedCells-seen))
	for i := range min(len(out), maxLossCells) {
		out[i].loss = true
	}
	nBad := len(out)
	take(spread(good, 4*(maxTracedCells-len(out))), maxTracedCells)
	markOutliers(out[nBad:], maxLossCells-min(nBad, maxLossCells))
	return out
}

// halve keeps every other element.
func halve(ks []int) []int {
	out := ks[:0]
	for i := 0; i < len(ks); i += 2 {
		out = append(out, ks[i])
	}
	return out
}

// spread is up to n elements of ks, evenly apart, in order.
func spread(ks []int, n int) []int {
	if len(ks) <= n || n <= 0 {
		return ks
	}
	out := make([]int, n)
	for i := range out {
		out[i] = ks[i*len(ks)/n]
	}
	return out
}

// traceJob is the flows one worker traces, with where each answer goes.
type traceJob struct {
	api   string
	flows []wire.FlowPath
	req   []map[string]any
}

// traceCells asks each initiator to trace its data flows and each target
// its responders' flows, traceWorkers workers at a time.
func (c *Coordinator) traceCells(ctx context.Context, m *matrix.Matrix, cells []traceCell) []wire.FlowPath {
	jobs := map[string]*traceJob{}
	add := func(from, to string, tc traceCell, back bool, flow uint16) {
		if flow == 0 {
			return
		}
		n, ok := c.reg.get(from)
		if !ok || n.APIAddr == "" {
			return
		}
		srcIP, err1 := portIP(m, from, tc.rail)
		dstIP, err2 := portIP(m, to, tc.rail)
		if err1 != nil || err2 != nil {
			return
		}
		j := jobs[from]
		if j == nil {
			j = &traceJob{api: n.APIAddr}
			jobs[from] = j
		}
		j.flows = append(j.flows, wire.FlowPath{Src: tc.src, Dst: tc.dst, Rail: tc.rail, Back: back, Flow: int(flow)})
		req := map[string]any{"src_ip": srcIP, "dst_ip": dstIP, "src_port": flow}
		if tc.loss && c.opts.LossProbes > 0 {
			req["loss_probes"] = c.opts.LossProbes
		}
		j.req = append(j.req, req)
	}
	for _, tc := range cells {
		add(tc.src, tc.dst, tc, false, tc.flow)
		add(tc.dst, tc.src, tc, true, tc.back)
	}
	var (
		mu  sync.Mutex
		out []wire.FlowPath
		wg  sync.WaitGroup
	)
	sem := make(chan struct{}, traceWorkers)
	for name, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for at := 0; at < len(j.req); at += traceBatch {
				end := min(at+traceBatch, len(j.req))
				paths, err := c.traceFlows(ctx, j.api, j.req[at:end])
				if err != nil {
					c.log.Debug("tracing flows", "worker", name, "err", err)
					for i := at; i < end; i++ {
						j.flows[i].Why = "not traced: " + err.Error()
					}
				}
				for i, p := range paths {
					fillFlowPath(&j.flows[at+i], p)
				}
				if ctx.Err() != nil {
					break
				}
			}
			mu.Lock()
			out = append(out, j.flows...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// fillFlowPath keeps a worker's answer for one flow.
func fillFlowPath(f *wire.FlowPath, p tracedReply) {
	if p.Error != "" {
		f.Why = p.Error
		return
	}
	f.Hops = make([]string, len(p.Hops))
	for i, h := range p.Hops {
		if h.Known() {
			f.Hops[i] = h.Addr.String()
		}
	}
	f.Reached, f.Why = p.Reached, p.Why
	for _, h := range p.Loss {
		f.Loss = append(f.Loss, wire.HopLoss{Sent: h.Sent, Answered: h.Answered})
	}
}

// tracedOf maps committed flows onto the topology: a flow whose hops do
// not make a path of it (a silent hop, an address no switch has, two
// cables between the same switches) is left out, never guessed. why is
// the first such flow's reason.
func (c *Coordinator) tracedOf(topo *topology.Topology, flows []wire.FlowPath) (tr *matrix.Traced, why string) {
	tr = &matrix.Traced{}
	var buf []topology.Link
	var addrs []netip.Addr
	for _, f := range flows {
		src, dst := f.Src, f.Dst
		if f.Back {
			src, dst = dst, src
		}
		hs, ok1 := topo.HCA(src, f.Rail)
		hd, ok2 := topo.HCA(dst, f.Rail)
		if !ok1 || !ok2 || len(f.Hops) == 0 {
			continue
		}
		addrs = hopAddrs(addrs[:0], f.Hops)
		p, err := topo.PathFromHops(buf[:0], hs, hd, addrs)
		if err != nil {
			if why == "" {
				why = fmt.Sprintf("%s -> %s rail %d: %v", f.Src, f.Dst, f.Rail, err)
			}
			continue
		}
		tr.Add(f.Src, f.Dst, f.Rail, f.Back, append([]topology.Link(nil), p...))
		if len(f.Loss) > 0 {
			loss := make([]matrix.HopLoss, len(f.Loss))
			for i, h := range f.Loss {
				loss[i] = matrix.HopLoss{Sent: h.Sent, Answered: h.Answered}
			}
			tr.AddLoss(f.Src, f.Dst, f.Rail, f.Back, loss)
		}
	}
	return tr, why
}

// Paths is sweep id's traced flows as committed (nil: none).
func (c *Coordinator) Paths(id string) []wire.FlowPath { return c.fsm.Paths(id) }

// SweepPaths is sweep id's traced flows with the links each maps to on
// the sweep's topology, or why it maps to none.
func (c *Coordinator) SweepPaths(id string) ([]api.SweepPath, bool) {
	if _, ok := c.fsm.Info(id); !ok {
		return nil, false
	}
	topo := c.SweepTopology(id)
	out := []api.SweepPath{}
	for _, f := range c.fsm.Paths(id) {
		p := api.SweepPath{Src: f.Src, Dst: f.Dst, Rail: f.Rail, Back: f.Back, Flow: f.Flow, Hops: f.Hops, Why: f.Why}
		req := api.TraceRequest{Src: f.Src, Dst: f.Dst, Rail: f.Rail}
		if f.Back {
			req.Src, req.Dst = f.Dst, f.Src
		}
		if len(f.Hops) > 0 {
			p.Links, p.LinksUnknown = traceLinks(topo, req, hopAddrs(nil, f.Hops))
		} else {
			p.LinksUnknown = "not traced"
		}
		out = append(out, p)
	}
	return out, true
}

// hopAddrs appends the committed hops as addresses; "" (a silent hop)
// becomes the invalid Addr, which PathFromHops refuses by its TTL.
func hopAddrs(buf []netip.Addr, hops []string) []netip.Addr {
	for _, h := range hops {
		a, _ := netip.ParseAddr(h)
		buf = append(buf, a)
	}
	return buf
}
