package coordinator

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/hostlist"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// maxRetests bounds confirmation passes: each pass at most halves what is
// left in practice, so more than a few only burns time.
const maxRetests = 5

// resolveSpec fills a request's zero fields from the coordinator's defaults
// and checks every field, naming it in the error. It returns the spec the
// sweep runs with, its mode, and the request as resolved (stored in the
// sweep's info so an operator sees what actually ran).
func (c *Coordinator) resolveSpec(req api.SweepRequest) (sweepSpec, string, api.SweepRequest, error) {
	o := &c.opts
	spec := sweepSpec{Params: o.Params, PairTimeout: o.PairTimeout, Pattern: o.Pattern, BatchSize: o.BatchSize,
		RailMode: o.RailMode, Budget: o.Budget, Retests: o.Retests, Profile: o.Profile}
	bad := func(field, format string, a ...any) (sweepSpec, string, api.SweepRequest, error) {
		return sweepSpec{}, "", api.SweepRequest{}, &requestError{field: field, msg: fmt.Sprintf(format, a...)}
	}
	mode := cmp.Or(req.Mode, o.Mode)
	if mode != "quick" && mode != "full" {
		return bad("mode", "%q: want quick (connectivity + latency) or full (+ bandwidth)", mode)
	}
	setPositive(&spec.Params.LatencyIters, req.LatencyIters)
	setPositive(&spec.Params.LatencySize, req.LatencySize)
	setPositive(&spec.Params.BWSize, req.BWSize)
	setPositive(&spec.Params.BWIters, req.BWIters)
	if mode == "quick" {
		spec.Params.BWSize = 0
	}
	if req.Connect != "" {
		spec.Params.Connect = req.Connect
	}
	if err := spec.Params.Validate(); err != nil {
		field, _, _ := strings.Cut(err.Error(), " ")
		return bad(field, "%v", err)
	}
	var err error
	if spec.PairTimeout, err = duration(req.PairTimeout, spec.PairTimeout); err != nil || spec.PairTimeout <= 0 {
		return bad("pair_timeout", "%q is not a positive duration such as 10s", req.PairTimeout)
	}
	if spec.Budget, err = duration(req.Budget, spec.Budget); err != nil || spec.Budget < 0 {
		return bad("budget", "%q is not a duration such as 90s (0 = no budget)", req.Budget)
	}
	spec.Pattern = cmp.Or(req.Pattern, spec.Pattern, patternAllPairs)
	if req.BatchSize != 0 {
		spec.BatchSize = req.BatchSize
	}
	spec.Root = req.Root
	switch spec.Pattern {
	case patternAllPairs, patternOneToAll:
	case patternKBatch:
		if spec.BatchSize < 1 {
			return bad("batch_size", "%d: k-batch needs batch_size >= 1 (pairs tested at once)", spec.BatchSize)
		}
	default:
		return bad("pattern", "%q: want %s, %s or %s", spec.Pattern, patternAllPairs, patternKBatch, patternOneToAll)
	}
	if spec.Pattern == patternOneToAll && spec.Root == "" {
		return bad("root", "one-to-all needs root: the node tested against every other")
	}
	rm, err := scheduler.ParseRailMode(cmp.Or(req.RailMode, spec.RailMode))
	if err != nil {
		return bad("rail_mode", "%v", err)
	}
	spec.RailMode = string(rm)
	for _, r := range req.Rails {
		if r < 0 || r > 1023 {
			return bad("rails", "rail %d out of range: rails are numbered from 0", r)
		}
	}
	spec.Rails = slices.Compact(slices.Sorted(slices.Values(req.Rails)))
	if req.Retests != nil {
		spec.Retests = *req.Retests
	}
	if spec.Retests < 0 || spec.Retests > maxRetests {
		return bad("retests", "%d out of range: use 0 (no confirmation) to %d passes", spec.Retests, maxRetests)
	}
	if req.Profile != "" {
		spec.Profile = req.Profile
	}
	if _, ok := o.Profiles[spec.Profile]; spec.Profile != "" && !ok {
		return bad("profile", "%q is not a loaded threshold profile; have %v (coordinator.profiles_file)", spec.Profile, profileNames(o.Profiles))
	}
	retests := spec.Retests
	resolved := api.SweepRequest{Mode: mode, Nodes: req.Nodes, Hosts: req.Hosts, Labels: req.Labels,
		Pattern: spec.Pattern, BatchSize: spec.BatchSize, Root: spec.Root, RailMode: spec.RailMode, Rails: spec.Rails,
		LatencyIters: spec.Params.LatencyIters, LatencySize: spec.Params.LatencySize, BWSize: spec.Params.BWSize,
		BWIters: spec.Params.BWIters, Connect: spec.Params.Connect, PairTimeout: spec.PairTimeout.String(),
		Retests: &retests, Profile: spec.Profile}
	if spec.Budget > 0 {
		resolved.Budget = spec.Budget.String()
	}
	return spec, mode, resolved, nil
}

// selectNodes keeps the known workers every selector of req matches. A name
// the request lists (by name or hostlist) that no worker has is an error:
// a Slurm job gated on a node without a worker must not pass quietly.
func selectNodes(known []api.NodeInfo, req api.SweepRequest) ([]api.NodeInfo, error) {
	var want []map[string]bool
	if len(req.Nodes) > 0 {
		want = append(want, setOf(req.Nodes))
	}
	if req.Hosts != "" {
		names, err := hostlist.Expand(req.Hosts)
		if err != nil {
			return nil, &requestError{field: "hosts", msg: err.Error()}
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
			return nil, &requestError{field: field, msg: fmt.Sprintf("no worker for %d node(s) %s: start rdmamesh worker there, or see GET /api/v1/nodes", len(missing), expr)}
		}
	}
	if len(out) == 0 && len(req.Labels) > 0 {
		return nil, &requestError{field: "labels", msg: fmt.Sprintf("no worker has the labels %v: check worker.labels on the nodes (GET /api/v1/nodes shows them)", req.Labels)}
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

func setPositive(dst *int, v int) {
	if v > 0 {
		*dst = v
	}
}

func duration(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	return time.ParseDuration(s)
}

func profileNames(p map[string]matrix.Thresholds) []string {
	return slices.Sorted(maps.Keys(p))
}

// thresholds are the rules a sweep is judged by: its profile's, or the
// coordinator's, with the configured baseline.
func (c *Coordinator) thresholds(spec sweepSpec) matrix.Thresholds {
	th := c.opts.Thresholds
	if p, ok := c.opts.Profiles[spec.Profile]; ok {
		th = p
	}
	// Plans that leave pairs or rails out on purpose must not fail on them.
	th.TestedOnly = spec.Pattern == patternOneToAll || len(spec.Rails) > 0 || spec.RailMode == string(scheduler.RailsCross)
	if b := c.opts.Baseline; b != nil {
		th.Baseline, th.BaselineName = b, b.Name
	}
	return th
}
