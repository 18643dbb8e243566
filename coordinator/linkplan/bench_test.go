package linkplan

import (
	"os"
	"testing"
)

// BenchmarkLinks plans a link sweep of the tree LINKPLAN_TREE (default: a
// three-tier 16,384 x 8 fat tree) and prints its size: what each leader
// spends before a links or fabric sweep's first round.
func BenchmarkLinks(b *testing.B) {
	spec := os.Getenv("LINKPLAN_TREE")
	if spec == "" {
		spec = "nodes=16384,rails=8,leaf=32,spines=16,pods=32,cores=256"
	}
	topo, ms := tree(b, spec)
	b.ResetTimer()
	for range b.N {
		plan, err := Links(topo, ms)
		if err != nil {
			b.Fatal(err)
		}
		covered, links := 0, 0
		for _, pc := range plan.Planes {
			covered += pc.Covered
			links += pc.Links
		}
		b.ReportMetric(float64(plan.Tests()), "tests")
		b.ReportMetric(float64(len(plan.Rounds)), "rounds")
		b.ReportMetric(float64(covered)/float64(links), "covered")
	}
}
