package live

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
)

// ring is a two-tier fabric for the link watch: 8 nodes, two a leaf on 4
// leaves, 2 spines. Cable i < 8 is node i's own, 8+2l+s leaf l's cable to
// spine s. A flow's label picks its spine (both ways: the answer carries
// the probe's label).
type ring struct{}

func (ring) FlowLinks(buf []int32, src, dst string, rail int, label uint32) ([]int32, bool) {
	var a, b int
	if _, err := fmt.Sscanf(src, "n%d", &a); err != nil {
		return buf, false
	}
	if _, err := fmt.Sscanf(dst, "n%d", &b); err != nil {
		return buf, false
	}
	s := int32(label % 2)
	ca, cb := 8+int32(a/2)*2+s, 8+int32(b/2)*2+s
	// There: a's cable up, its leaf's up to the spine, down b's leaf's,
	// b's cable down; the answer back the other way over the same cables.
	return append(buf, 2*int32(a), 2*ca, 2*cb+1, 2*int32(b)+1, 2*int32(b), 2*cb, 2*ca+1, 2*int32(a)+1), true
}

func (ring) HostLinks(node string, rail int) ([2]int32, int32, bool) {
	var a int32
	if _, err := fmt.Sscanf(node, "n%d", &a); err != nil {
		return [2]int32{}, -1, false
	}
	return [2]int32{2 * a, 2*a + 1}, a / 2, true
}

func (ring) CableName(c int32) string {
	if c < 8 {
		return fmt.Sprintf("n%d <-> leaf%d:%d", c, c/2, c%2+1)
	}
	l, s := (c-8)/2, (c-8)%2
	return fmt.Sprintf("leaf%d:%d <-> spine%d:%d", l, 101+s, s, l+1)
}

// ringFlows: every node probes the node two on (the next leaf) over both
// spines, and the node two back, as the link plan's ring does.
var ringFlows = func() [][3]int {
	var out [][3]int
	for i := range 8 {
		for _, d := range []int{2, 6} {
			for label := 1; label <= 2; label++ {
				out = append(out, [3]int{i, (i + d) % 8, label})
			}
		}
	}
	return out
}()

// feed folds window w of every ring flow, each of its probes lost with
// the chance loss gives for the flow's cables.
func feed(m *Matrix, rng *rand.Rand, w int64, perWindow int, loss func(cable int32) float64) {
	by := map[string][]liveplan.Summary{}
	for _, f := range ringFlows {
		src, dst := fmt.Sprintf("n%d", f[0]), fmt.Sprintf("n%d", f[1])
		links, _ := ring{}.FlowLinks(nil, src, dst, 0, uint32(f[2]))
		survive := 1.0
		for _, l := range links {
			survive *= 1 - loss(l>>1)
		}
		lost := 0
		for range perWindow {
			if rng.Float64() >= survive {
				lost++
			}
		}
		by[src] = append(by[src], liveplan.Summary{Node: dst, Rail: 0, Label: uint32(f[2]), Window: w, Sent: perWindow,
			Answered: perWindow - lost, Lost: lost})
	}
	for src, sums := range by {
		m.Fold(src, sums)
	}
}

func TestLinkWatchNamesTheLossyCable(t *testing.T) {
	const bad = 8 + 2*1 + 0 // leaf1's cable to spine0
	for seed := range int64(20) {
		m := New(Options{})
		rng := rand.New(rand.NewSource(seed))
		for w := range int64(5) {
			feed(m, rng, w, 80, func(int32) float64 { return 0 })
			if op, _ := m.JudgeLinks(ring{}, "v1"); len(op) > 0 {
				t.Fatalf("seed %d: clean window %d named %+v", seed, w, op)
			}
		}
		var named []api.LiveLink
		for w := int64(5); w < 8 && len(named) == 0; w++ {
			feed(m, rng, w, 80, func(c int32) float64 { return map[bool]float64{true: 0.01}[c == bad] })
			named, _ = m.JudgeLinks(ring{}, "v1")
		}
		if len(named) != 1 || named[0].Cable != "leaf1:101 <-> spine0:2" || named[0].State != "lossy" || named[0].Partners < 3 {
			t.Fatalf("seed %d: named %+v, want leaf1:101 <-> spine0:2 alone", seed, named)
		}
		// It stays lossy for 20 windows: one episode, no flaps.
		for w := int64(8); w < 28; w++ {
			feed(m, rng, w, 80, func(c int32) float64 { return map[bool]float64{true: 0.01}[c == bad] })
			if op, _ := m.JudgeLinks(ring{}, "v1"); len(op) > 0 {
				t.Fatalf("seed %d: window %d opened another episode %+v", seed, w, op)
			}
		}
		if ls := m.Links(); len(ls) != 1 || ls[0].Flaps != 0 || ls[0].State != "lossy" {
			t.Errorf("seed %d: a steadily lossy cable: %+v", seed, ls)
		}
	}
}

// A cable that goes down and up again and again is one episode with its
// flap count, closed once it has stayed up for the quiet period.
func TestLinkWatchFlapIsOneEpisode(t *testing.T) {
	const bad = 8 + 2*3 + 1
	m := New(Options{Links: LinkOptions{Quiet: 10}})
	rng := rand.New(rand.NewSource(1))
	downs := map[int64]bool{3: true, 4: true, 9: true, 15: true, 16: true, 17: true}
	var opened, closed []api.LiveLink
	for w := range int64(40) {
		feed(m, rng, w, 40, func(c int32) float64 { return map[bool]float64{true: 1}[c == bad && downs[w]] })
		op, cl := m.JudgeLinks(ring{}, "v1")
		opened, closed = append(opened, op...), append(closed, cl...)
		if w == 17 {
			ls := m.Links()
			if len(ls) != 1 || ls[0].State != "down" {
				t.Fatalf("window 17: %+v", ls)
			}
		}
	}
	if len(opened) != 1 || opened[0].Cable != "leaf3:102 <-> spine1:4" || opened[0].State != "down" || opened[0].Since != 3 {
		t.Fatalf("opened %+v, want one episode of leaf3:102 <-> spine1:4 from window 3", opened)
	}
	if len(closed) != 1 || closed[0].Flaps != 2 || closed[0].LastBad != 17 {
		t.Fatalf("closed %+v, want the episode closed with 2 flaps, last bad in window 17", closed)
	}
	if ls := m.Links(); len(ls) != 0 {
		t.Errorf("still open: %+v", ls)
	}
}

// A flow the router cannot place, or a window a sweep held, names nothing.
func TestLinkWatchIgnoresWhatItCannotPlace(t *testing.T) {
	m := New(Options{})
	for w := range int64(4) {
		m.Fold("n0", []liveplan.Summary{{Node: "ghost", Rail: 0, Label: 1, Window: w, Sent: 80, Lost: 80},
			{Node: "n2", Rail: 0, Label: 1, Window: w, Sent: 80, Lost: 80, Held: true}})
		if op, _ := m.JudgeLinks(ring{}, "v1"); len(op) > 0 {
			t.Fatalf("named %+v", op)
		}
	}
	if m.Len() != 0 {
		t.Errorf("link flows became cells: %d", m.Len())
	}
}

// star is the smallest fabric where an HCA's cable and a switch link are
// on the same link flows: a's two flows (to b and to c) both cross a's
// own cable (5) and the switch cable 1; b's and c's cables are 6 and 7.
type star struct{}

func (star) FlowLinks(buf []int32, src, dst string, rail int, label uint32) ([]int32, bool) {
	far := map[string]int32{"b": 6, "c": 7}[dst]
	return append(buf, 2*5, 2*1, 2*far+1, 2*far, 2*1+1, 2*5+1), src == "a" && far != 0
}

func (star) HostLinks(node string, rail int) ([2]int32, int32, bool) {
	c, ok := map[string]int32{"a": 5, "b": 6, "c": 7, "d": 8}[node]
	leaf := map[string]int32{"a": 0, "d": 0, "b": 1, "c": 2}[node]
	return [2]int32{2 * c, 2*c + 1}, leaf, ok
}

func (star) CableName(c int32) string { return fmt.Sprintf("cable%d", c) }

// Link flows alone cannot tell a's cable from the switch cable both its
// flows cross; the probes a traded with its leaf mate d, clean, can.
func TestLinkWatchHostCableNeedsItsLeafMates(t *testing.T) {
	for _, tc := range []struct {
		mates bool
		want  string
	}{{false, "cable5"}, {true, "cable1"}} {
		m := New(Options{})
		m.SetLinkRouter(star{}, "v1")
		var named []api.LiveLink
		for w := range int64(3) {
			sums := []liveplan.Summary{{Node: "b", Label: 9, Window: w, Sent: 100, Answered: 96, Lost: 4},
				{Node: "c", Label: 9, Window: w, Sent: 100, Answered: 95, Lost: 5}}
			if tc.mates {
				sums = append(sums, liveplan.Summary{Node: "d", InGroup: true, Window: w, Sent: 100, Answered: 100})
			}
			m.Fold("a", sums)
			op, _ := m.JudgeLinks(star{}, "v1")
			named = append(named, op...)
		}
		if len(named) != 1 || named[0].Cable != tc.want {
			t.Errorf("leaf mates probed %v: named %+v, want %s", tc.mates, named, tc.want)
		}
	}
}
