package gate

import (
	"bytes"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// LoadSpec reads a sweep spec file (gate.yaml): the fields of a sweep
// request in YAML, e.g.
//
//	mode: full
//	hosts: gpu[001-128,130]
//	rail_mode: same
//	budget: 5m
//	retests: 2
//	profile: ib-ndr-8x400
//
// Unknown keys are errors, so a typo cannot silently widen a sweep.
func LoadSpec(path string) (api.SweepRequest, error) {
	var req api.SweepRequest
	raw, err := os.ReadFile(path)
	if err != nil {
		return req, usage(fmt.Errorf("--spec: %w", err))
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&req); err != nil {
		return req, usage(fmt.Errorf("--spec %s: %v (keys are those of POST /api/v1/sweeps: mode, hosts, nodes, labels, pattern, batch_size, root, rail_mode, rails, budget, retests, profile, connect, ...)", path, err))
	}
	return req, nil
}

// Merge lays the fields set in over onto base: flags win over the spec file.
func Merge(base, over api.SweepRequest) api.SweepRequest {
	str := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	num := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	str(&base.Mode, over.Mode)
	str(&base.Hosts, over.Hosts)
	str(&base.Pattern, over.Pattern)
	str(&base.Root, over.Root)
	str(&base.RailMode, over.RailMode)
	str(&base.Connect, over.Connect)
	str(&base.PairTimeout, over.PairTimeout)
	str(&base.Budget, over.Budget)
	str(&base.Profile, over.Profile)
	num(&base.BatchSize, over.BatchSize)
	num(&base.LatencyIters, over.LatencyIters)
	num(&base.LatencySize, over.LatencySize)
	num(&base.BWSize, over.BWSize)
	num(&base.BWIters, over.BWIters)
	if len(over.Nodes) > 0 {
		base.Nodes = over.Nodes
	}
	if len(over.Rails) > 0 {
		base.Rails = over.Rails
	}
	if len(over.Labels) > 0 {
		base.Labels = over.Labels
	}
	if over.Retests != nil {
		base.Retests = over.Retests
	}
	return base
}
