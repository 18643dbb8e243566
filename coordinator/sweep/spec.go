package sweep

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/scheduler"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// maxRetests bounds confirmation passes: each pass at most halves what is
// left in practice, so more than a few only burns time.
const maxRetests = 5

// Resolve fills a request's zero fields from the coordinator's defaults
// and checks every field, naming it in the error. It returns the spec the
// sweep runs with, its mode, and the request as resolved (stored in the
// sweep's info so an operator sees what actually ran).
func Resolve(o Defaults, req api.SweepRequest) (Spec, string, api.SweepRequest, error) {
	spec := Spec{Params: o.Params, PairTimeout: o.PairTimeout, Pattern: o.Pattern, BatchSize: o.BatchSize,
		RailMode: o.RailMode, Budget: o.Budget, Retests: o.Retests, Profile: o.Profile}
	bad := func(field, format string, a ...any) (Spec, string, api.SweepRequest, error) {
		return Spec{}, "", api.SweepRequest{}, BadRequest(field, fmt.Sprintf(format, a...))
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
	spec.Pattern = cmp.Or(req.Pattern, spec.Pattern, PatternAllPairs)
	if req.BatchSize != 0 {
		spec.BatchSize = req.BatchSize
	}
	spec.Root = req.Root
	switch spec.Pattern {
	case PatternAllPairs, PatternOneToAll, PatternLinks, PatternFabric:
	case PatternKBatch:
		if spec.BatchSize < 1 {
			return bad("batch_size", "%d: k-batch needs batch_size >= 1 (pairs tested at once)", spec.BatchSize)
		}
	default:
		return bad("pattern", "%q: want %s, %s, %s, %s (every switch link, steered) or %s (links, plus every pair inside each leaf)",
			spec.Pattern, PatternAllPairs, PatternKBatch, PatternOneToAll, PatternLinks, PatternFabric)
	}
	if spec.Pattern == PatternOneToAll && spec.Root == "" {
		return bad("root", "one-to-all needs root: the node tested against every other")
	}
	rm, err := scheduler.ParseRailMode(cmp.Or(req.RailMode, spec.RailMode))
	if err != nil {
		return bad("rail_mode", "%v", err)
	}
	spec.RailMode = string(rm)
	if spec.Steered() && rm != scheduler.RailsSame {
		return bad("rail_mode", "%q: pattern %s steers each rail's tests over its own plane's links; use rail_mode same", rm, spec.Pattern)
	}
	if spec.Steered() && spec.Params.Connect == probe.ConnectRDMACM {
		return bad("connect", "rdmacm: pattern %s steers tests by the flow label the exchange connection sets on each QP; use connect exchange", spec.Pattern)
	}
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
		return bad("profile", "%q is not a loaded threshold profile; have %v (coordinator.profiles_file)", spec.Profile, ProfileNames(o.Profiles))
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

// ProfileNames lists the loaded threshold profiles, sorted, for messages.
func ProfileNames(p map[string]matrix.Thresholds) []string {
	return slices.Sorted(maps.Keys(p))
}

// Defaults are what a request leaves out: the coordinator's configuration.
type Defaults struct {
	Params      probe.TestParams
	PairTimeout time.Duration
	Mode        string
	Pattern     string
	BatchSize   int
	RailMode    string
	Budget      time.Duration
	Retests     int
	Profile     string
	Profiles    map[string]matrix.Thresholds
}

// Spec is what a leader needs to (re)run a sweep's remaining rounds.
// Rounds are re-planned from it and the node list on every leader, so the
// planners must stay deterministic. The log records it as wire.Spec, its
// field-for-field twin: add a field to both, or the store does not compile.
type Spec struct {
	Params      probe.TestParams
	PairTimeout time.Duration
	Pattern     string // all-pairs | k-batch | one-to-all | links | fabric
	BatchSize   int
	Root        string
	RailMode    string        // same | cross | all
	Rails       []int         // nil = every rail
	Budget      time.Duration // 0 = none
	Retests     int           // confirmation passes
	Profile     string
}

// TestedOnly reports whether the plan leaves pairs or rails out on purpose,
// so the judgement must not fail on them.
func (s Spec) TestedOnly() bool {
	return s.Pattern == PatternOneToAll || s.Steered() || len(s.Rails) > 0 || s.RailMode == string(scheduler.RailsCross)
}
