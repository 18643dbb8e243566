package topology

import (
	"slices"
	"testing"
)

func mustTree(tb testing.TB, spec string) *Topology {
	tb.Helper()
	ft, err := ParseFatTree(spec)
	if err != nil {
		tb.Fatal(err)
	}
	topo, err := ft.Generate()
	if err != nil {
		tb.Fatal(err)
	}
	return topo
}

// checkPath fails unless the links join end to end from src to dst.
func checkPath(t *testing.T, topo *Topology, src, dst int, p []Link) {
	t.Helper()
	if from := topo.LinkFrom(p[0]); !from.IsHCA() || from.HCA != src {
		t.Fatalf("path starts at %s, not %s", topo.EndName(from), topo.HCAName(src))
	}
	if to := topo.LinkTo(p[len(p)-1]); !to.IsHCA() || to.HCA != dst {
		t.Fatalf("path ends at %s, not %s", topo.EndName(to), topo.HCAName(dst))
	}
	for i := 1; i < len(p); i++ {
		if a, b := topo.LinkTo(p[i-1]), topo.LinkFrom(p[i]); a.Switch != b.Switch || a.IsHCA() {
			t.Fatalf("hop %d: %s arrives at %s, next leaves %s", i, topo.LinkName(p[i-1]), topo.EndName(a), topo.EndName(b))
		}
	}
}

func TestRouteShapes(t *testing.T) {
	for _, tc := range []struct {
		spec                 string
		sameLeaf, cross, far int // hops: same leaf, other leaf (same pod), other pod
		src, near, other, x  [2]int
	}{
		{"nodes=64,rails=2,leaf=8,spines=4", 2, 4, 4, [2]int{0, 0}, [2]int{1, 0}, [2]int{9, 0}, [2]int{63, 0}},
		{"nodes=64,rails=2,leaf=8,spines=4,pods=4,cores=8", 2, 4, 6, [2]int{0, 1}, [2]int{7, 1}, [2]int{8, 1}, [2]int{63, 1}},
		{"nodes=64,rails=2,leaf=8,spines=4,pods=4,cores=8,ll=ib", 2, 4, 6, [2]int{0, 1}, [2]int{7, 1}, [2]int{8, 1}, [2]int{63, 1}},
	} {
		topo := mustTree(t, tc.spec)
		hca := func(nr [2]int) int { return nr[0]*2 + nr[1] }
		for _, want := range []struct {
			dst  [2]int
			hops int
		}{{tc.near, tc.sameLeaf}, {tc.other, tc.cross}, {tc.x, tc.far}} {
			for flow := uint32(0); flow < 50; flow++ {
				p, ok := topo.Route(nil, hca(tc.src), hca(want.dst), 0xC000+flow)
				if !ok {
					t.Fatalf("%s: no route to %v", tc.spec, want.dst)
				}
				checkPath(t, topo, hca(tc.src), hca(want.dst), p)
				if len(p) != want.hops {
					t.Fatalf("%s: %d hops to %v, want %d", tc.spec, len(p), want.dst, want.hops)
				}
			}
		}
	}
}

// TestECMPSpread: RoCE flows with different source ports between the same
// two leaves spread over every spine, evenly enough that a link's share
// of tests is what localization expects; IB pins a destination to one
// path whatever the source, spreading destinations instead.
func TestECMPSpread(t *testing.T) {
	topo := mustTree(t, "nodes=64,rails=1,leaf=16,spines=4")
	perSpine := map[int]int{}
	for flow := uint32(0); flow < 4000; flow++ {
		p, _ := topo.Route(nil, 0, 63, 0xC000+flow%0x4000)
		perSpine[topo.LinkTo(p[1]).Switch]++
	}
	if len(perSpine) != 4 {
		t.Fatalf("flows used %d spines, want 4", len(perSpine))
	}
	for s, n := range perSpine {
		if n < 850 || n > 1150 {
			t.Errorf("spine %s got %d of 4000 flows", topo.Switches[s].Name, n)
		}
	}

	ib := mustTree(t, "nodes=64,rails=1,leaf=16,spines=4,ll=ib")
	dsts := map[int]int{}
	for dst := 16; dst < 64; dst++ {
		var first int
		for src := 0; src < 16; src++ {
			p, _ := ib.Route(nil, src, dst, 0)
			sp := ib.LinkTo(p[1]).Switch
			if src == 0 {
				first = sp
			} else if sp != first {
				t.Fatalf("IB: destination %d reached through %d and %d", dst, first, sp)
			}
		}
		dsts[first]++
	}
	for s, n := range dsts {
		if n != 12 {
			t.Errorf("IB: spine %s carries %d of 48 destinations, want 12 (d-mod-k)", ib.Switches[s].Name, n)
		}
	}
}

// TestDModKUsesEveryUplink: on a 3-tier InfiniBand tree every up link of
// every tier carries some destination, as OpenSM's ftree spreads them; a
// tier that divided the LID by its own arity alone left half the core
// links without traffic.
func TestDModKUsesEveryUplink(t *testing.T) {
	topo := mustTree(t, "nodes=128,rails=1,leaf=8,spines=4,pods=4,cores=8,ll=ib")
	used := map[Link]bool{}
	for src := range topo.HCAs {
		for dst := range topo.HCAs {
			if src != dst {
				p, _ := topo.Route(nil, src, dst, 0)
				for _, l := range p {
					used[l] = true
				}
			}
		}
	}
	for s := range topo.Switches {
		for _, l := range topo.Uplinks(s) {
			if !used[l] {
				t.Errorf("up link %s carries no destination", topo.LinkName(l))
			}
		}
	}
}

// Routed around a withdrawn cable, every flow still reaches its
// destination and none crosses the cable either way; flows that never met
// it keep their paths. In 3 tiers a withdrawn spine-core cable moves the
// flows between pods; a leaf whose every uplink is withdrawn reaches no
// other leaf.
func TestRouteAround(t *testing.T) {
	for _, tc := range []struct{ spec, from, to string }{
		{"nodes=12,rails=1,leaf=4,spines=2,oversub=2", "leaf-r0-00", "spine-r0-01"},
		{"nodes=16,rails=1,leaf=4,spines=2,oversub=2,pods=2,cores=4", "spine-r0-p0-01", "core-r0-01"},
	} {
		topo := mustTree(t, tc.spec)
		l, err := topo.TargetLinks("", tc.from, tc.to, false)
		if err != nil {
			t.Fatal(err)
		}
		gone := map[Link]bool{Link(l[0]): true, Link(l[1]): true}
		avoid := func(l Link) bool { return gone[l] }
		moved := 0
		for src := range topo.HCAs {
			for dst := range topo.HCAs {
				if src == dst {
					continue
				}
				for flow := uint32(0xC000); flow < 0xC010; flow++ {
					p, ok := topo.RouteAround(nil, src, dst, flow, avoid)
					if !ok {
						t.Fatalf("%s: no route %s -> %s around %s~%s", tc.spec, topo.HCAName(src), topo.HCAName(dst), tc.from, tc.to)
					}
					checkPath(t, topo, src, dst, p)
					model, _ := topo.Route(nil, src, dst, flow)
					crossed := false
					for _, x := range model {
						crossed = crossed || gone[x]
					}
					for _, x := range p {
						if gone[x] {
							t.Fatalf("%s: %s -> %s flow %#x crosses the withdrawn cable", tc.spec, topo.HCAName(src), topo.HCAName(dst), flow)
						}
					}
					if crossed {
						moved++
					} else if !slices.Equal(p, model) {
						t.Fatalf("%s: a flow that never met the cable changed its path", tc.spec)
					}
				}
			}
		}
		if moved == 0 {
			t.Fatalf("%s: no flow crossed %s~%s before: the test proves nothing", tc.spec, tc.from, tc.to)
		}
	}
	topo := mustTree(t, "nodes=12,rails=1,leaf=4,spines=2,oversub=2")
	up := topo.Uplinks(topo.LeafSwitch(0))
	cut := func(l Link) bool { return l == up[0] || l == up[1] }
	if _, ok := topo.RouteAround(nil, 0, 11, 0xC000, cut); ok {
		t.Fatal("a leaf with every uplink withdrawn still reaches another leaf")
	}
}

// FirstHop is Route's first switch link, on RoCE and IB, two and three
// tiers; none within a leaf.
func TestFirstHopIsTheRoutesSecondLink(t *testing.T) {
	for _, spec := range []string{"nodes=16,rails=1,leaf=4,spines=2", "nodes=64,rails=1,leaf=4,spines=2,pods=4,cores=4", "nodes=16,rails=1,leaf=4,spines=2,ll=ib"} {
		topo := mustTree(t, spec)
		for src := range topo.HCAs {
			for dst := range topo.HCAs {
				for flow := uint32(0xC000); flow < 0xC008; flow++ {
					p, _ := topo.Route(nil, src, dst, flow)
					l, ok := topo.FirstHop(src, dst, flow)
					switch {
					case len(p) <= 2 && ok:
						t.Fatalf("%s: %s -> %s in one leaf: first hop %s", spec, topo.HCAName(src), topo.HCAName(dst), topo.LinkName(l))
					case len(p) > 2 && (!ok || l != p[1]):
						t.Fatalf("%s: %s -> %s flow %#x: first hop %v %v, route %v", spec, topo.HCAName(src), topo.HCAName(dst), flow, l, ok, p)
					}
				}
			}
		}
	}
}
