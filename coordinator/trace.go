package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/pathtrace"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// traceBound bounds one cell's trace: the worker paces its probes, and a
// silent hop costs it a probe timeout per try.
const traceBound = 90 * time.Second

// TraceCell traces one cell of a sweep on demand: its initiator's worker
// sends probes with the test's 5-tuple (its GIDs' IPs, its flow), and the
// hops are mapped onto the sweep's topology. A suspect cell's path is
// then measured rather than assumed from the model of ECMP.
func (c *Coordinator) TraceCell(ctx context.Context, id string, req api.TraceRequest) (api.CellTrace, error) {
	out := api.CellTrace{Src: req.Src, Dst: req.Dst, Rail: req.Rail}
	m, ok := c.Matrix(id)
	if !ok {
		return out, sweep.BadRequest("id", "no sweep "+id+" (GET /api/v1/sweeps lists them)")
	}
	k, ok := m.CellIndex(req.Rail, req.Src, req.Dst)
	if !ok {
		return out, sweep.BadRequest("src", fmt.Sprintf("sweep %s has no cell %s -> %s on rail %d", id, req.Src, req.Dst, req.Rail))
	}
	cell := m.CellAt(k)
	if cell.Flow == 0 {
		return out, sweep.BadRequest("src", fmt.Sprintf("cell %s -> %s on rail %d has no flow: its worker's driver does not report its UDP source port, so there is nothing to trace", req.Src, req.Dst, req.Rail))
	}
	out.Flow = cell.Flow
	var err error
	if out.SrcIP, err = portIP(m, req.Src, req.Rail); err != nil {
		return out, sweep.BadRequest("src", err.Error())
	}
	if out.DstIP, err = portIP(m, req.Dst, req.Rail); err != nil {
		return out, sweep.BadRequest("dst", err.Error())
	}
	n, ok := c.reg.get(req.Src)
	if !ok || n.APIAddr == "" {
		return out, sweep.Unavailable("worker " + req.Src + " is not reachable: it is not among the members with an API address")
	}
	p, err := c.traceOn(ctx, n.APIAddr, out)
	if err != nil {
		return out, sweep.Unavailable(fmt.Sprintf("tracing from %s: %v", req.Src, err))
	}
	out.Why = p.Why
	addrs := make([]netip.Addr, len(p.Hops))
	topo := c.SweepTopology(id)
	for i, h := range p.Hops {
		hop := api.TraceHop{TTL: h.TTL, Reason: h.Reason}
		if h.Known() {
			hop.Addr, addrs[i] = h.Addr.String(), h.Addr
			if topo != nil {
				if s, ok := topo.SwitchAt(h.Addr); ok {
					hop.Switch = topo.Switches[s].Name
				}
			}
		}
		out.Hops = append(out.Hops, hop)
	}
	out.Links, out.LinksUnknown = traceLinks(topo, req, addrs)
	return out, nil
}

// portIP is the address of node's GID on rail, as the sweep recorded it.
func portIP(m *matrix.Matrix, node string, rail int) (string, error) {
	for _, n := range m.Nodes {
		if n.Name != node {
			continue
		}
		if rail >= len(n.Ports) || n.Ports[rail].IP == "" {
			return "", fmt.Errorf("%s has no IP address on rail %d (its GID is not RoCE v2 over IP)", node, rail)
		}
		return n.Ports[rail].IP, nil
	}
	return "", fmt.Errorf("%s is not a node of the sweep", node)
}

// traceOn asks the worker at apiAddr to trace one flow.
func (c *Coordinator) traceOn(ctx context.Context, apiAddr string, t api.CellTrace) (pathtrace.Path, error) {
	ctx, cancel := context.WithTimeout(ctx, traceBound)
	defer cancel()
	paths, err := c.traceFlows(ctx, apiAddr, []map[string]any{{"src_ip": t.SrcIP, "dst_ip": t.DstIP, "src_port": t.Flow}})
	if err != nil {
		return pathtrace.Path{}, err
	}
	if e := paths[0].Error; e != "" {
		return pathtrace.Path{}, fmt.Errorf("%s", e)
	}
	return paths[0].Path, nil
}

// tracedReply is the worker's answer for one flow: its path, or why not.
type tracedReply struct {
	pathtrace.Path
	Error string `json:"error"`
}

// traceFlows asks the worker at apiAddr to trace flows (worker
// TraceFlow's fields, at most its 64) and returns a reply per flow, in
// order.
func (c *Coordinator) traceFlows(ctx context.Context, apiAddr string, flows []map[string]any) ([]tracedReply, error) {
	body, _ := json.Marshal(map[string]any{"flows": flows})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(apiAddr, "/v1/trace"), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	c.authorize(req)
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(raw))
	}
	var reply struct {
		Paths []tracedReply `json:"paths"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil || len(reply.Paths) != len(flows) {
		return nil, fmt.Errorf("the worker's answer is not %d path(s): %.200s", len(flows), raw)
	}
	return reply.Paths, nil
}

// traceLinks maps a trace's hop addresses onto the topology's links, or
// says why they cannot be.
func traceLinks(topo *topology.Topology, req api.TraceRequest, hops []netip.Addr) ([]string, string) {
	if topo == nil {
		return nil, "the sweep ran without a topology"
	}
	src, ok1 := topo.HCA(req.Src, req.Rail)
	dst, ok2 := topo.HCA(req.Dst, req.Rail)
	if !ok1 || !ok2 {
		return nil, fmt.Sprintf("the topology has no HCA of %s or %s on rail %d", req.Src, req.Dst, req.Rail)
	}
	path, err := topo.PathFromHops(nil, src, dst, hops)
	if err != nil {
		return nil, err.Error()
	}
	names := make([]string, len(path))
	for i, l := range path {
		names[i] = topo.LinkName(l)
	}
	return names, ""
}
