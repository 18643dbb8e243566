package scale

import (
	"fmt"

	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/topology"
)

// layTree is cfg.Tree laid over the run's workers: their names, the
// preset's rails and link layer; nil without a tree.
func layTree(cfg Config, fab *sim.Fabric, names []string) (*topology.Topology, error) {
	if cfg.Tree == "" {
		return nil, nil
	}
	spec := fab.Preset()
	ll := "roce"
	if spec.LinkLayer == "InfiniBand" {
		ll = "ib"
	}
	ft, err := topology.ParseFatTree(fmt.Sprintf("nodes=%d,rails=%d,ll=%s,%s", len(names), spec.HCAs, ll, cfg.Tree))
	if err != nil {
		return nil, fmt.Errorf("BENCH_TREE: %w", err)
	}
	ft.NodeName = func(i int) string { return names[i] }
	return ft.Generate()
}
