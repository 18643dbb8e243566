package coordinator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// runSweep runs every round of id that has no committed result yet. It is
// also how a new leader resumes a sweep its predecessor left unfinished.
func (c *Coordinator) runSweep(ctx context.Context, id string) {
	defer c.setActive(id, false)
	c.setActive(id, true)
	sv, ok := c.fsm.sweepData(id)
	if !ok {
		return
	}
	names := make([]string, len(sv.Nodes))
	byName := make(map[string]matrix.Node, len(sv.Nodes))
	for i, n := range sv.Nodes {
		names[i] = n.Name
		byName[n.Name] = n
	}
	rounds, err := scheduler.AllPairs(names)
	if err != nil {
		c.endSweep(id, api.SweepFailed, err.Error(), nil)
		return
	}
	start := time.Now()
	for _, rd := range rounds {
		if sv.Rounds[rd.Index] {
			continue
		}
		t0 := time.Now()
		cells := c.runRound(ctx, id, sv.Spec, byName, rd)
		if ctx.Err() != nil {
			c.log.Info("sweep interrupted; the next leader resumes it", "sweep", id, "round", rd.Index)
			return
		}
		t1 := time.Now()
		size, err := c.applySized(entryRound, roundResult{SweepID: id, Round: rd.Index, Cells: cells})
		if err != nil {
			c.log.Warn("cannot commit round; the next leader resumes it", "sweep", id, "round", rd.Index, "err", err)
			return
		}
		if c.opts.OnRound != nil {
			c.opts.OnRound(RoundTiming{SweepID: id, Round: rd.Index, Cells: len(cells), Dispatch: t1.Sub(t0), Commit: time.Since(t1), Bytes: size})
		}
	}
	m, _ := c.Matrix(id)
	healthy := m != nil && m.Healthy
	c.endSweep(id, api.SweepDone, "", &healthy)
	c.log.Info("sweep done", "sweep", id, "nodes", len(names), "rounds", len(rounds), "healthy", healthy,
		"elapsed", time.Since(start).Round(time.Millisecond))
}

func (c *Coordinator) endSweep(id, state, msg string, healthy *bool) {
	if err := c.apply(entrySweepEnd, sweepEnd{SweepID: id, State: state, Error: msg, At: time.Now().UTC(), Healthy: healthy}); err != nil {
		c.log.Warn("cannot commit sweep end", "sweep", id, "err", err)
	}
}

func (c *Coordinator) setActive(id string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case on:
		c.active = id
	case c.active == id:
		c.active = ""
	}
}

// runRound tests every pair of one round at once (bounded by Parallelism):
// the pairs are disjoint, so no HCA is in two tests. Within a pair the two
// directions run one after the other, so bandwidth is never shared.
func (c *Coordinator) runRound(ctx context.Context, id string, spec sweepSpec, nodes map[string]matrix.Node, rd scheduler.Round) []matrix.Cell {
	par := c.opts.Parallelism
	if par <= 0 || par > len(rd.Pairs) {
		par = len(rd.Pairs)
	}
	sem := make(chan struct{}, max(par, 1))
	var (
		mu  sync.Mutex
		out []matrix.Cell
		wg  sync.WaitGroup
	)
	for _, p := range rd.Pairs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cells := c.direction(ctx, id, rd.Index, spec, nodes[p.A], nodes[p.B])
			cells = append(cells, c.direction(ctx, id, rd.Index, spec, nodes[p.B], nodes[p.A])...)
			mu.Lock()
			out = append(out, cells...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// railPairs pairs rail i with rail i on both nodes.
func railPairs(src, dst matrix.Node) []probe.RailPair {
	n := min(len(src.Ports), len(dst.Ports))
	out := make([]probe.RailPair, 0, n)
	for r := 0; r < n; r++ {
		s, d := src.Ports[r], dst.Ports[r]
		out = append(out, probe.RailPair{Rail: r,
			Src: probe.Endpoint{Device: s.Device, Port: s.Port, GIDIndex: s.GIDIndex, Rail: r},
			Dst: probe.Endpoint{Device: d.Device, Port: d.Port, GIDIndex: d.GIDIndex, Rail: r}})
	}
	return out
}

// failCells gives every rail of a direction the same failure.
func failCells(src, dst string, round int, rails []probe.RailPair, e *probe.Error) []matrix.Cell {
	out := make([]matrix.Cell, len(rails))
	for i, rp := range rails {
		out[i] = matrix.Cell{Src: src, Dst: dst, Rail: rp.Rail, SrcDevice: rp.Src.Device, DstDevice: rp.Dst.Device,
			Round: round, Class: e.Class, Error: e}
	}
	return out
}

func newSweepID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// plan picks the sweep's nodes: every known worker that has not left
// gracefully. Dead ones stay in: a node that vanished must show up red.
func (c *Coordinator) plan(req api.SweepRequest) ([]matrix.Node, error) {
	known := c.reg.list()
	want := map[string]bool{}
	for _, n := range req.Nodes {
		want[n] = true
	}
	var nodes []matrix.Node
	for _, n := range known {
		if n.Role != "worker" || n.State == "left" || (len(want) > 0 && !want[n.Name]) {
			continue
		}
		delete(want, n.Name)
		mn := matrix.Node{Name: n.Name, State: n.State}
		if n.Inventory != nil {
			mn.Labels, mn.Ports = n.Inventory.Labels, n.Inventory.Ports
		}
		nodes = append(nodes, mn)
	}
	if len(want) > 0 {
		var missing []string
		for n := range want {
			missing = append(missing, n)
		}
		slices.Sort(missing)
		return nil, &requestError{field: "nodes", msg: fmt.Sprintf("unknown worker(s) %v: see GET /api/v1/nodes", missing)}
	}
	if len(nodes) < 2 {
		return nil, &unavailableError{msg: fmt.Sprintf("a sweep needs at least 2 workers; %d known", len(nodes))}
	}
	return nodes, nil
}
