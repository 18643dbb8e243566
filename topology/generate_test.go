package topology

import (
	"net/netip"
	"strings"
	"testing"
)

func TestGenerateCounts(t *testing.T) {
	for _, tc := range []struct {
		spec                                    string
		switches, cables, leaves, hcas, maxTier int
	}{
		// 512 nodes x 8: 16 leaves and 16 spines a plane, 32 uplinks a leaf.
		{"nodes=512,rails=8,leaf=32,spines=16", 8 * 32, 8 * (512 + 16*32), 8 * 16, 4096, 2},
		// 2:1 oversubscribed: 16 uplinks a leaf, one to each spine.
		{"nodes=64,rails=2,leaf=32,spines=16,oversub=2", 2 * 18, 2 * (64 + 2*16), 4, 128, 2},
		// 3 tiers: 4 pods of 16 nodes, 2 leaves and 4 spines a pod, 8 cores.
		{"nodes=64,rails=2,leaf=8,spines=4,pods=4,cores=8", 2 * (8 + 4*(2+4)), 2 * (64 + 4*2*8 + 4*4*2), 16, 128, 3},
	} {
		ft, err := ParseFatTree(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		topo, err := ft.Generate()
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if got := len(topo.Switches); got != tc.switches {
			t.Errorf("%s: %d switches, want %d", tc.spec, got, tc.switches)
		}
		if got := len(topo.Cables); got != tc.cables {
			t.Errorf("%s: %d cables, want %d", tc.spec, got, tc.cables)
		}
		if got := topo.Leaves(); got != tc.leaves {
			t.Errorf("%s: %d leaves, want %d", tc.spec, got, tc.leaves)
		}
		if got := len(topo.HCAs); got != tc.hcas {
			t.Errorf("%s: %d HCAs, want %d", tc.spec, got, tc.hcas)
		}
		if got := int(topo.MaxTier()); got != tc.maxTier {
			t.Errorf("%s: %d tiers, want %d", tc.spec, got, tc.maxTier)
		}
		// Rail-optimized: every leaf serves one rail.
		for h := range topo.HCAs {
			if leaf := topo.Switches[topo.LeafOf(h)]; leaf.Plane != topo.HCAs[h].Rail {
				t.Fatalf("%s: %s is on %s of plane %d", tc.spec, topo.HCAName(h), leaf.Name, leaf.Plane)
			}
		}
	}
}

func TestParseFatTreeErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"nodes=512,rails=8,leaf=32":                           "spines: 0",
		"nodes=512,rails=8,leaf=32,spines=5":                  "do not spread evenly over 5 spines",
		"nodes=512,rails=8,leaf=32,spines=16,pods=1":          "pods: 1",
		"nodes=512,rails=8,leaf=32,spines=16,cores=4":         "cores need pods",
		"nodes=512,rails=8,leaf=32,spines=16,pods=3,cores=16": "do not split evenly over 3 pods",
		"nodes=512,rails=8,leaf=32,spines=16,pods=2,cores=10": "want a multiple of spines",
		"nodes=512,rails=8,leaf=32,spines=16,colour=red":      `unknown key "colour"`,
		"nodes=512,rails=x":                                   "rails=x is not a whole number",
		"nodes=512,nodes=4":                                   "nodes given twice",
		"nodes=512,rails=8,leaf=32,spines=16,ll=eth":          `ll: "eth"`,
		"nodes=512,rails=8,leaf=32,spines=16,addrs=10.1.2.3":  "addrs=10.1.2.3: want a prefix",
	} {
		_, err := ParseFatTree(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to say %q", spec, err, want)
		}
	}
}

// addrs gives every switch its own address inside the prefix, which maps
// a traced hop back to it; a prefix too small for the tree is refused.
func TestGenerateAddrs(t *testing.T) {
	ft, err := ParseFatTree("nodes=8,rails=2,leaf=4,spines=2,addrs=10.255.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := ft.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if !topo.HasAddrs() {
		t.Fatal("no switch has an address")
	}
	for i, s := range topo.Switches {
		a := netip.MustParseAddr(s.Addrs[0])
		if got, ok := topo.SwitchAt(a); !ok || got != i {
			t.Fatalf("%s answers from %s, which maps to switch %d", s.Name, a, got)
		}
	}
	ft.Addrs = netip.MustParsePrefix("10.255.0.0/30")
	if _, err := ft.Generate(); err == nil || !strings.Contains(err.Error(), "give a larger prefix") {
		t.Fatalf("8 switches in a /30: %v", err)
	}
}
