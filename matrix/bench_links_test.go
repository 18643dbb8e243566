package matrix

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/topology"
)

// linkSource is synthSource laid over a fat tree: every cell carries a
// flow, and the cells whose writes cross one lossy uplink (leaf → spine
// on rail 2) measure a third less bandwidth, as the sim's go-back-N does.
type linkSource struct {
	*synthSource
	topo      *topology.Topology
	leaf      int // the faulty uplink's leaf (switch index)
	uplink    topology.Link
	hcaLeaf   []int // node*rails+rail → leaf switch
	faultRail int
}

func flowOf(a, b, r int) uint16 { return 0xC000 | uint16((a*7919+b*104729+r*31)&0x3fff) }

func newLinkSource(n, rails int, tree string) (*linkSource, error) {
	ft, err := topology.ParseFatTree(tree)
	if err != nil {
		return nil, err
	}
	t, err := ft.Generate()
	if err != nil {
		return nil, err
	}
	s := &linkSource{synthSource: newSynthSource(n, rails), topo: t, faultRail: 2}
	s.hcaLeaf = make([]int, n*rails)
	for i, node := range s.nodes {
		for r := range rails {
			h, ok := t.HCA(node.Name, r)
			if !ok {
				return nil, fmt.Errorf("tree %s lacks %s rail %d", tree, node.Name, r)
			}
			s.hcaLeaf[i*rails+r] = t.LeafOf(h)
		}
	}
	h, _ := t.HCA(s.nodes[100].Name, s.faultRail)
	s.leaf = t.LeafOf(h)
	s.uplink = t.Uplinks(s.leaf)[3]
	return s, nil
}

// crosses reports whether cell a → b on r writes over the lossy uplink.
func (s *linkSource) crosses(a, b, r int) bool {
	if r != s.faultRail || s.hcaLeaf[a*s.rails+r] != s.leaf || s.hcaLeaf[b*s.rails+r] == s.leaf {
		return false
	}
	ha, _ := s.topo.HCA(s.nodes[a].Name, r)
	hb, _ := s.topo.HCA(s.nodes[b].Name, r)
	var buf [8]topology.Link
	p, _ := s.topo.Route(buf[:0], ha, hb, uint32(flowOf(a, b, r)))
	return len(p) > 1 && p[1] == s.uplink
}

func (s *linkSource) Figures(f *Figures, a, b, r int) bool {
	s.synthSource.Figures(f, a, b, r)
	if s.crosses(a, b, r) {
		f.Gbps *= 0.66
	}
	return true
}

func (s *linkSource) Fill(c *Cell, a, b, r int) bool {
	s.synthSource.Fill(c, a, b, r)
	if c.Bandwidth != nil && s.crosses(a, b, r) {
		c.Bandwidth.Gbps *= 0.66
	}
	c.Flow = flowOf(a, b, r)
	return true
}

// BenchmarkLinksHuge is BenchmarkAnalyseHuge with link localization: the
// same compact sweep of BENCH_NODES (default 1,024) x 8 on a 3-tier fat
// tree, analysed without and with the topology, one lossy uplink among
// the synthetic faults. It prints both times, the peak heaps and the
// first link suspect. A benchmark only:
// BENCH_NODES=4096 go test -run X -bench LinksHuge -benchtime 1x ./matrix/
func BenchmarkLinksHuge(b *testing.B) {
	n := 1024
	if v, err := strconv.Atoi(os.Getenv("BENCH_NODES")); err == nil && v > 1 {
		n = v
	}
	const rails = 8
	pods := max(n/512, 2)
	src, err := newLinkSource(n, rails, fmt.Sprintf("nodes=%d,rails=%d,leaf=32,spines=16,pods=%d,cores=16", n, rails, pods))
	if err != nil {
		b.Fatal(err)
	}
	th := DefaultThresholds()
	run := func(topo *topology.Topology) (*Matrix, time.Duration, float64, uint64) {
		base := heapInuse()
		w := watchMemory()
		start, cpu0 := time.Now(), processCPU()
		m := AnalyseOn(topo, src.nodes, src, nil, th)
		took, cpu := time.Since(start), processCPU()-cpu0
		return m, took, cpu, w.end() - min(base, w.peakHeap)
	}
	for b.Loop() {
		_, t0, c0, p0 := run(nil)
		m, t1, c1, p1 := run(src.topo)
		var first *Suspect
		for i := range m.Suspects {
			if k := m.Suspects[i].Kind; k == KindLink || k == KindCable || k == KindSwitch {
				first = &m.Suspects[i]
				break
			}
		}
		if first == nil || first.Kind != KindLink {
			b.Fatalf("no link suspect for %s:\n%s", src.topo.CableName(src.uplink.Cable()), m.Summary())
		}
		fmt.Printf("links    %d x %d on a %d-pod fat tree: analysis %.2f s (%.2f s CPU) without the topology, %.2f s (%.2f s CPU) with it: +%.2f s (%+.1f%%); peak heap +%.0f MB vs +%.0f MB\n",
			n, rails, pods, t0.Seconds(), c0, t1.Seconds(), c1, (t1 - t0).Seconds(), 100*(t1.Seconds()/t0.Seconds()-1), float64(p0)/1e6, float64(p1)/1e6)
		fmt.Printf("         injected %s; named %s %v (confidence %.2f): %s\n", src.topo.CableName(src.uplink.Cable()), first.Kind, first.Ends, first.Confidence, first.Reason)
	}
}
