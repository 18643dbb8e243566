package coordinator

import (
	"github.com/rdmamesh/rdmamesh/coordinator/linkplan"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// SweepCoverage is how sweep id's tests crossed its topology's switch
// links (web's GET /api/v1/sweeps/:id/coverage); false when there is no
// such sweep, nil coverage when it ran without a topology.
func (c *Coordinator) SweepCoverage(id string) (*api.Coverage, bool) {
	m, ok := c.Matrix(id)
	if !ok {
		return nil, false
	}
	topo := c.SweepTopology(id)
	if topo == nil {
		return nil, true
	}
	traced := map[flowKey][]topology.Link{}
	for _, f := range c.fsm.Paths(id) {
		if f.Back || len(f.Hops) == 0 {
			continue
		}
		src, ok1 := topo.HCA(f.Src, f.Rail)
		dst, ok2 := topo.HCA(f.Dst, f.Rail)
		if !ok1 || !ok2 {
			continue
		}
		if p, err := topo.PathFromHops(nil, src, dst, hopAddrs(nil, f.Hops)); err == nil {
			traced[flowKey{f.Src, f.Dst, f.Rail, f.Flow}] = p
		}
	}
	cov := &api.Coverage{Sweep: id}
	taken := map[int][]linkplan.Taken{}
	rails := map[int]bool{}
	var buf []topology.Link
	_ = m.EachCell(func(_ int, r *matrix.Result) error {
		if r.Verdict == matrix.VerdictUntested || r.DstRail != nil {
			return nil
		}
		src, ok1 := topo.HCA(r.Src, r.Rail)
		dst, ok2 := topo.HCA(r.Dst, r.Rail)
		if !ok1 || !ok2 {
			return nil
		}
		rails[r.Rail] = true
		path, ok := traced[flowKey{r.Src, r.Dst, r.Rail, int(r.Flow)}]
		switch {
		case ok:
			cov.Traced++
		case r.Flow != 0 || topo.LinkLayer == topology.InfiniBand:
			buf, ok = topo.Route(buf[:0], src, dst, uint32(r.Flow))
			if !ok {
				cov.Unknown++
				return nil
			}
			path = buf
			cov.Modelled++
		default:
			cov.Unknown++
			return nil
		}
		if len(path) <= 2 {
			return nil // within a leaf: its cables are the HCAs' own
		}
		links := append([]topology.Link(nil), path[1:len(path)-1]...)
		taken[r.Rail] = append(taken[r.Rail], linkplan.Taken{Src: src, Dst: dst, Links: links})
		return nil
	})
	var list []int
	for r := range rails {
		list = append(list, r)
	}
	for _, pc := range linkplan.Cover(topo, list, taken) {
		p := api.PlaneCoverage{Rail: pc.Rail, Links: pc.Links, Covered: pc.Covered, Tests: pc.Tests, MinTests: pc.MinTests, MaxTests: pc.MaxTests}
		for _, u := range pc.Uncovered {
			p.Uncovered = append(p.Uncovered, api.UncoveredLink{Link: u.Link, Tests: u.Tests, Why: u.Why})
		}
		cov.Planes = append(cov.Planes, p)
	}
	return cov, true
}

// flowKey is a test's flow: a trace counts for the test whose port it
// traced.
type flowKey struct {
	src, dst   string
	rail, flow int
}
