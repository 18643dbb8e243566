package sweep

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/hostlist"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// SelectNodes picks the sweep's nodes from the known members: the workers
// the request selects that have not left gracefully. Dead ones stay in: a
// node that vanished must show up red.
func SelectNodes(known []api.NodeInfo, req api.SweepRequest) ([]matrix.Node, error) {
	picked, err := selectKnown(known, req)
	if err != nil {
		return nil, err
	}
	nodes := make([]matrix.Node, 0, len(picked))
	for _, n := range picked {
		mn := matrix.Node{Name: n.Name, State: n.State}
		if n.Inventory != nil {
			mn.Labels, mn.Ports = n.Inventory.Labels, n.Inventory.Ports
		}
		nodes = append(nodes, mn)
	}
	if len(nodes) < 2 {
		return nil, Unavailable(fmt.Sprintf("a sweep needs at least 2 workers; %d selected", len(nodes)))
	}
	return nodes, nil
}

// selectKnown keeps the known workers every selector of req matches. A name
// the request lists (by name or hostlist) that no worker has is an error:
// a Slurm job gated on a node without a worker must not pass quietly.
func selectKnown(known []api.NodeInfo, req api.SweepRequest) ([]api.NodeInfo, error) {
	var want []map[string]bool
	if len(req.Nodes) > 0 {
		want = append(want, setOf(req.Nodes))
	}
	if req.Hosts != "" {
		names, err := hostlist.Expand(req.Hosts)
		if err != nil {
			return nil, BadRequest("hosts", err.Error())
		}
		want = append(want, setOf(names))
	}
	have := map[string]bool{}
	var out []api.NodeInfo
	for _, n := range known {
		if n.Role != "worker" || n.State == "left" {
			continue
		}
		have[n.Name] = true
		if matchesAll(n, want, req.Labels) {
			out = append(out, n)
		}
	}
	for i, field := range selectorFields(req) {
		var missing []string
		for name := range want[i] {
			if !have[name] {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			expr, err := hostlist.Compress(missing)
			if err != nil {
				expr = strings.Join(missing, ",")
			}
			return nil, BadRequest(field, fmt.Sprintf("no worker for %d node(s) %s: start rdmamesh worker there, or see GET /api/v1/nodes", len(missing), expr))
		}
	}
	if len(out) == 0 && len(req.Labels) > 0 {
		return nil, BadRequest("labels", fmt.Sprintf("no worker has the labels %v: check worker.labels on the nodes (GET /api/v1/nodes shows them)", req.Labels))
	}
	return out, nil
}

func selectorFields(req api.SweepRequest) []string {
	var f []string
	if len(req.Nodes) > 0 {
		f = append(f, "nodes")
	}
	if req.Hosts != "" {
		f = append(f, "hosts")
	}
	return f
}

func matchesAll(n api.NodeInfo, want []map[string]bool, labels map[string]string) bool {
	for _, w := range want {
		if !w[n.Name] {
			return false
		}
	}
	if len(labels) == 0 {
		return true
	}
	var have map[string]string
	if n.Inventory != nil {
		have = n.Inventory.Labels
	}
	for k, v := range labels {
		if have[k] != v {
			return false
		}
	}
	return true
}

func setOf(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
