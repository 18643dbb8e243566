package sim

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

func TestParseLinkFault(t *testing.T) {
	for spec, want := range map[string]string{
		"cable=leaf-r0-05:33~spine-r0-02:5:loss=2%":  "cable=leaf-r0-05:33~spine-r0-02:5:loss=2%",
		"cable=leaf-r0-05:33>spine-r0-02:5:bw=0.7":   "cable=leaf-r0-05:33>spine-r0-02:5:bw=0.7",
		"link=leaf-r0-05~spine-r0-02:down":           "cable=leaf-r0-05~spine-r0-02:down",
		"cable=node-03/mlx5_1~leaf-r1-00:3:loss=1%":  "cable=node-03/mlx5_1~leaf-r1-00:3:loss=1%",
		"switch=spine-r0-02:down":                    "switch=spine-r0-02:down",
		"switch=spine-r0-02:loss=5%,lat=2x":          "switch=spine-r0-02:loss=5%,lat=2x",
		"cable=leaf-r0-05:33~spine-r0-02:5:flap=20%": "cable=leaf-r0-05:33~spine-r0-02:5:flap=20%",
		"switch=spine-r0-02:loss=1%,flap=0.5%":       "switch=spine-r0-02:flap=0.5%,loss=1%",
		"cable=node-03/mlx5_1~leaf-r1-00:flap=99.9%": "cable=node-03/mlx5_1~leaf-r1-00:flap=99.9%",
		"cable=leaf-r0-05~spine-r0-02:withdrawn":     "cable=leaf-r0-05~spine-r0-02:withdrawn",
	} {
		f, err := ParseFault(spec)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		if got := f.String(); got != want {
			t.Errorf("%s: reads back as %s, want %s", spec, got, want)
		}
	}
	for spec, want := range map[string]string{
		"cable=leaf-r0-05:33":                      "want cable=A~B:EFFECT",
		"cable=leaf-r0-05:0~spine-r0-02:5:down":    "must be a number from 1",
		"cable=leaf-r0-05:33~spine-r0-02:5":        "missing",
		"cable=leaf-r0-05:33~spine-r0-02:5:dead":   "a cable takes down, withdrawn, flap=P%, loss",
		"cable=a:1~b:2:loss=2%@egress":             "a cable takes",
		"switch=spine-r0-02":                       "missing \":EFFECT\"",
		"switch=spine r0:down":                     "contains",
		"cable=node-03/mlx5_1:1~leaf-r1-00:3:down": "without a port",
		"cable=a:1~b:2:flap=20":                    "flap wants the share of the time the link is down, a percentage 0 < P < 100 with a % sign",
		"cable=a:1~b:2:flap=0%":                    "0 < P < 100",
		"cable=a:1~b:2:flap=100%":                  "for a link down all the time write down",
		"cable=a:1~b:2:flap=-5%":                   "0 < P < 100",
		"cable=a:1~b:2:flap=x%":                    "like flap=20%",
		"cable=a:1~b:2:flap":                       "like flap=20%",
		"switch=s1:flap=5%,flap=6%":                "given twice",
		"switch=s1:flap=5%@egress":                 "takes no direction",
		"switch=s1:flop=5%":                        "unknown effect \"flop\" (want down, withdrawn, flap=P%, loss=P%",
		"node-03/mlx5_1:withdrawn":                 "withdrawn takes no value and is a cable's or link's",
		"node-03/mlx5_1:flap=20%":                  "flap is a cable or switch effect; for an HCA's own cable write cable=node-03/mlx5_1~LEAF:flap=20%",
		"node-03~node-05:down,flap=20%":            "for an HCA's own cable write cable=NODE/DEVICE~LEAF:flap=20%",
	} {
		_, err := ParseFault(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to say %q", spec, err, want)
		}
	}
}

func TestRxeSport(t *testing.T) {
	// hash_32(qpn, 14) by hand for two QP numbers.
	for qpn, want := range map[uint32]uint16{0x11: 0xC000 | uint16((0x11*uint64(0x61C88647))&0xffffffff>>18), 0x12: 0xC000 | uint16((0x12*uint64(0x61C88647))&0xffffffff>>18)} {
		if got := rxeSport(qpn); got != want {
			t.Errorf("qpn %#x: sport %#x, want %#x", qpn, got, want)
		}
	}
}

func TestLinkFaultNeedsATopology(t *testing.T) {
	_, err := New(Config{Preset: "roce-2x100", Faults: faults(t, "switch=spine-r0-00:down")})
	if err == nil || !strings.Contains(err.Error(), "need a topology") {
		t.Errorf("a switch fault without a topology: %v", err)
	}
}

// twoLeaves is a Paths for the tests: node-01 and node-02 on leaf-a,
// node-03 and node-04 on leaf-b, rail 0 only, one cable between the
// leaves. HCA h's cable is link 2h up and 2h+1 down; leaf-a → leaf-b is
// link 8, back link 9.
type twoLeaves struct{}

var twoLeafNodes = []string{"node-01", "node-02", "node-03", "node-04"}

func (twoLeaves) HCA(node string, rail int) (int, bool) {
	h := slices.Index(twoLeafNodes, node)
	return h, h >= 0 && rail == 0
}

func (twoLeaves) AppendRoute(buf []int32, src, dst int, _ uint32, _ map[int32]bool) []int32 {
	buf = append(buf, int32(2*src))
	if src/2 != dst/2 {
		buf = append(buf, int32(8+src/2))
	}
	return append(buf, int32(2*dst+1))
}

// HopAddrs: leaf-a answers from 10.255.0.1, leaf-b from 10.255.0.2.
func (twoLeaves) HopAddrs(buf []netip.Addr, route []int32) []netip.Addr {
	for _, l := range route[:len(route)-1] {
		leaf := byte(l/4 + 1) // an HCA's cable up to its leaf
		switch l {
		case 8:
			leaf = 2
		case 9:
			leaf = 1
		}
		buf = append(buf, netip.AddrFrom4([4]byte{10, 255, 0, leaf}))
	}
	return buf
}

func (twoLeaves) TargetLinks(sw, from, to string, oneWay bool) ([]int32, error) {
	switch {
	case sw == "leaf-b":
		return []int32{4, 5, 6, 7, 8, 9}, nil
	case from == "leaf-a" && to == "leaf-b" && oneWay:
		return []int32{8}, nil
	case from == "leaf-a" && to == "leaf-b":
		return []int32{8, 9}, nil
	case from == "node-01/mlx5_0" && to == "leaf-a":
		return []int32{0, 1}, nil
	}
	return nil, fmt.Errorf("no cable %s~%s or switch %q in twoLeaves", from, to, sw)
}

// flapTest is one test of flapRun: the ends' indices in twoLeafNodes.
type flapTest struct {
	src, dst int
	o        outcome
}

var flapParams = probe.TestParams{LatencySize: 8, LatencyIters: 50, Warmup: 5, BWSize: 65536, BWIters: 20, TxDepth: 16, Timeout: 5 * time.Second}

// flapRun tests every ordered pair of twoLeaves 40 times on rail 0.
func flapRun(t *testing.T, seed int64, specs ...string) (*Fabric, []flapTest) {
	t.Helper()
	fab := mustFabric(t, Config{Preset: "roce-2x100", Seed: seed, Topology: twoLeaves{}, Faults: faults(t, specs...)})
	var out []flapTest
	for range 40 {
		for s, src := range twoLeafNodes {
			for d, dst := range twoLeafNodes {
				if s != d {
					out = append(out, flapTest{s, d, runPair(t, fab, src, dst, 0, flapParams)})
				}
			}
		}
	}
	return fab, out
}

// TestLinkFlap: a flapping cable or switch fails about its share of the
// tests routed over it, each as the same test over a down link fails, and
// leaves the others exactly as on a healthy fabric. An outage of an HCA's
// own cable moves that port's link_downed once; no other port counts.
func TestLinkFlap(t *testing.T) {
	_, clean := flapRun(t, 5)
	for _, tc := range []struct {
		spec    string
		through func(src, dst int) bool
		cabled  []string // HCAs whose own cable the fault takes down
	}{
		{"cable=leaf-a~leaf-b:flap=30%", func(s, d int) bool { return s/2 != d/2 }, nil},
		{"cable=node-01/mlx5_0~leaf-a:flap=30%", func(s, d int) bool { return s == 0 || d == 0 }, []string{"node-01"}},
		{"switch=leaf-b:flap=30%", func(s, d int) bool { return s >= 2 || d >= 2 }, []string{"node-03", "node-04"}},
	} {
		fab, got := flapRun(t, 5, tc.spec)
		downFab := mustFabric(t, Config{Preset: "roce-2x100", Topology: twoLeaves{},
			Faults: faults(t, strings.Replace(tc.spec, "flap=30%", "down", 1))})
		failed, through := 0, 0
		wantDowns := map[string]int{}
		for k, x := range got {
			o, src, dst := x.o, twoLeafNodes[x.src], twoLeafNodes[x.dst]
			if !tc.through(x.src, x.dst) {
				if !reflect.DeepEqual(o, clean[k].o) {
					t.Errorf("%s: %s -> %s does not cross the fault but changed: %+v, healthy %+v", tc.spec, src, dst, o, clean[k].o)
				}
				continue
			}
			through++
			if o.Err == nil {
				// Healthy within the 2% TestHealthyBands allows.
				if want := fab.spec.ExpectedGbps(flapParams.BWSize); math.Abs(o.BW.Gbps-want) > 0.02*want {
					t.Errorf("%s: %s -> %s met the link up but streamed %.1f Gb/s, healthy ~%.1f", tc.spec, src, dst, o.BW.Gbps, want)
				}
				continue
			}
			failed++
			for _, n := range []string{src, dst} {
				if slices.Contains(tc.cabled, n) {
					wantDowns[n]++
				}
			}
			down := runPair(t, downFab, src, dst, 0, flapParams)
			if o.Step != "latency" || down.Err == nil || *o.Err != *down.Err {
				t.Errorf("%s: %s -> %s failed at %s with %+v; over the down link: %s %+v", tc.spec, src, dst, o.Step, o.Err, down.Step, down.Err)
			}
		}
		// 30% of the tests through it, within five binomial deviations.
		if sd := math.Sqrt(float64(through) * 0.3 * 0.7); math.Abs(float64(failed)-0.3*float64(through)) > 5*sd {
			t.Errorf("%s: %d of %d tests through it failed, want about 30%%", tc.spec, failed, through)
		}
		for _, n := range twoLeafNodes {
			c, err := fab.Node(n).Counters("mlx5_0", 1)
			if err != nil {
				t.Fatal(err)
			}
			var downs uint64
			for _, v := range c.Values {
				if v.Kind == counters.LinkDown {
					downs += v.N
				}
			}
			if downs != uint64(wantDowns[n]) {
				t.Errorf("%s: %s counted its link going down %d times, want %d", tc.spec, n, downs, wantDowns[n])
			}
		}
		// The same seed meets the same outages; another seed others.
		_, again := flapRun(t, 5, tc.spec)
		_, other := flapRun(t, 6, tc.spec)
		if !reflect.DeepEqual(got, again) {
			t.Errorf("%s: the same seed met different outages", tc.spec)
		}
		if reflect.DeepEqual(failures(got), failures(other)) {
			t.Errorf("%s: seeds 5 and 6 met the same outages", tc.spec)
		}
	}
}

func failures(tests []flapTest) []bool {
	out := make([]bool, len(tests))
	for i, x := range tests {
		out[i] = x.o.Err != nil
	}
	return out
}

// TestLinkLossIsNamed: a test lost on a cable says how lossy the links on
// its two paths were, as it names a lossy HCA.
func TestLinkLossIsNamed(t *testing.T) {
	fab := mustFabric(t, Config{Preset: "roce-2x100", Topology: twoLeaves{}, Faults: faults(t, "cable=leaf-a>leaf-b:loss=100%")})
	o := runPair(t, fab, "node-01", "node-03", 0, flapParams)
	want := "packets are being lost on the path (100% loss on the links the writes cross, 0% on the acknowledgements')"
	if o.Err == nil || !strings.Contains(o.Err.Cause, want) {
		t.Errorf("node-01 -> node-03 over a cable losing everything: %+v, want it to say %q", o.Err, want)
	}
}

// A flow label steers: it alone decides a RoCE QP's source port, whatever
// the QP number, as rdma_get_udp_sport does; without one the port follows
// the QP number.
func TestFlowLabelSetsTheSourcePort(t *testing.T) {
	fab, err := New(Config{Preset: "roce-2x100", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := probe.DefaultTestParams()
	ports := map[uint16]bool{}
	for i := range 3 {
		ep := probe.Endpoint{Device: "mlx5_0", Port: 1, GIDIndex: -1, FlowLabel: 0x1234}
		s, err := fab.Node("node-01").Open(ctx, ep, p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.Info().UDPSport, probe.RoCEv2Sport(0x1234, 0, 0); got != want {
			t.Errorf("open %d with label 0x1234: sport %#x, want %#x", i, got, want)
		}
		ep.FlowLabel = 0
		u, err := fab.Node("node-01").Open(ctx, ep, p)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := u.Info().UDPSport, rxeSport(u.Info().QPN); got != want {
			t.Errorf("open %d without a label: sport %#x, want rxe's %#x", i, got, want)
		}
		ports[u.Info().UDPSport] = true
	}
	if len(ports) < 2 {
		t.Errorf("three QPs without a label share port %v: the QP number should spread them", ports)
	}
}
