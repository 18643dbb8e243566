package pathtrace

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// closFamily is one address family of the fabric's flow host1 → host2.
type closFamily struct {
	name     string
	src, dst netip.Addr
	match    string // nft's address match for it
}

var closFamilies = []closFamily{
	{"ipv4", netip.MustParseAddr("10.0.1.2"), netip.MustParseAddr("10.0.2.2"), "ip"},
	{"ipv6", netip.MustParseAddr("fd00:1::2"), netip.MustParseAddr("fd00:2::2"), "ip6"},
}

// closPorts are RoCE source ports (0xC000 up): 16 of them land on one
// spine alone with a chance of 2^-15.
var closPorts = func() []uint16 {
	var ps []uint16
	for p := uint16(0xC000); p < 0xC010; p++ {
		ps = append(ps, p)
	}
	return ps
}()

var closOpts = Options{MaxTTL: 8, ProbesPerTTL: 1, MaxSilent: 2, Timeout: 300 * time.Millisecond, Pacing: 2 * time.Millisecond}

func counterName(fam closFamily, port uint16) string { return fmt.Sprintf("%s_%d", fam.name, port) }

// countFlows gives each spine a counter per flow that matches the whole
// 5-tuple (addresses, UDP, source port, 4791) as packets arrive.
func (c *clos) countFlows(t *testing.T) {
	t.Helper()
	var b strings.Builder
	b.WriteString("table inet pt {\n")
	for _, fam := range closFamilies {
		for _, p := range closPorts {
			fmt.Fprintf(&b, "counter %s { }\n", counterName(fam, p))
		}
	}
	b.WriteString("chain pre {\ntype filter hook prerouting priority 0; policy accept;\n")
	for _, fam := range closFamilies {
		for _, p := range closPorts {
			fmt.Fprintf(&b, "%s saddr %s %s daddr %s udp sport %d udp dport 4791 counter name %s\n",
				fam.match, fam.src, fam.match, fam.dst, p, counterName(fam, p))
		}
	}
	b.WriteString("}\n}\n")
	for _, s := range []string{"spine1", "spine2"} {
		c.nft(t, s, b.String())
	}
}

// spineCounts is every flow's packets at each spine.
func (c *clos) spineCounts(t *testing.T) map[string]map[string]uint64 {
	t.Helper()
	return map[string]map[string]uint64{"spine1": c.counters(t, "spine1"), "spine2": c.counters(t, "spine2")}
}

// traceFrom traces fam's flow from every port in host1's namespace.
func (c *clos) traceFrom(t *testing.T, fam closFamily, ports []uint16, trace func(context.Context, Flow) (Path, error)) []Path {
	t.Helper()
	paths, errs := make([]Path, len(ports)), make([]error, len(ports))
	err := c.in("host1", func() {
		for i, p := range ports {
			paths[i], errs[i] = trace(context.Background(), Flow{Src: fam.src, Dst: fam.dst, SrcPort: p})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("trace from port %d: %v", ports[i], err)
		}
	}
	return paths
}

// probesPastLeaf1 is how many probes of p went past TTL 1, so through a spine.
func probesPastLeaf1(p Path) uint64 {
	var n uint64
	for _, h := range p.Hops[1:] {
		n += uint64(h.Probes)
	}
	return n
}

func otherSpine(s string) string {
	if s == "spine1" {
		return "spine2"
	}
	return "spine1"
}

// The kernel's own ECMP, traced: every flow goes leaf1, a spine, leaf2 to
// host2; a source port keeps its spine, the ports spread over both, and
// the spines' counters of the exact 5-tuple saw every probe past leaf1 on
// that spine and none on the other. An ICMP drop leaves its hop unknown
// with the reason, and a RoCE-like destination's silence is said as such.
func TestClosPaths(t *testing.T) {
	c := newClos(t)
	c.countFlows(t)
	via := map[string]map[uint16]string{} // family → source port → spine
	for _, fam := range closFamilies {
		t.Run(fam.name, func(t *testing.T) { via[fam.name] = c.spread(t, fam) })
	}
	t.Run("icmp-dropped", func(t *testing.T) { c.icmpDropped(t, via) })
	t.Run("hop-loss", func(t *testing.T) { c.hopLoss(t, via["ipv4"]) })
	t.Run("roce-silent", c.roceSilent)
}

// spread traces every port of fam three times (a Tracer, the same Tracer
// from its cache, a fresh one) and returns each port's spine.
func (c *clos) spread(t *testing.T, fam closFamily) map[uint16]string {
	t.Helper()
	tr := NewTracer(Config{Options: closOpts})
	paths := c.traceFrom(t, fam, closPorts, tr.Trace)
	counts := c.spineCounts(t)
	spineOf := map[uint16]string{}
	for i, p := range paths {
		port, roles := closPorts[i], c.roles(p)
		if len(roles) != 4 || roles[0] != "leaf1" || !strings.HasPrefix(roles[1], "spine") || roles[2] != "leaf2" || roles[3] != "host2" ||
			!p.Reached || !p.Complete || p.Hops[3].Answer != "port unreachable" {
			t.Fatalf("port %d: hops %v (%s), reached %v complete %v: %s", port, roles, p, p.Reached, p.Complete, p.Why)
		}
		s, name := roles[1], counterName(fam, port)
		spineOf[port] = s
		if got, want := counts[s][name], probesPastLeaf1(p); got != want || counts[otherSpine(s)][name] != 0 {
			t.Errorf("port %d via %s: %s counted %d packets of the 5-tuple (want %d), %s %d (want 0)",
				port, s, s, got, want, otherSpine(s), counts[otherSpine(s)][name])
		}
		t.Logf("%s sport %d: %v = %s | %s %d pkts, %s %d pkts", fam.name, port, roles, p, s, counts[s][name], otherSpine(s), counts[otherSpine(s)][name])
	}

	again := c.traceFrom(t, fam, closPorts, tr.Trace)
	if now := c.spineCounts(t); !equalCounts(now, counts) {
		t.Errorf("the cached traces sent probes: counts %v, were %v", now, counts)
	}
	for i := range again {
		if !slices.Equal(again[i].Hops, paths[i].Hops) {
			t.Errorf("port %d from the cache: %s, traced %s", closPorts[i], again[i], paths[i])
		}
	}

	fresh := c.traceFrom(t, fam, closPorts, NewTracer(Config{Options: closOpts}).Trace)
	after := c.spineCounts(t)
	for i, p := range fresh {
		port := closPorts[i]
		s, name := spineOf[port], counterName(fam, port)
		if roles := c.roles(p); len(roles) != 4 || roles[1] != s {
			t.Errorf("port %d went via %s, then via %v", port, s, roles)
		}
		if grew := after[s][name] - counts[s][name]; grew != probesPastLeaf1(p) || after[otherSpine(s)][name] != 0 {
			t.Errorf("port %d traced again: %s counted %d more (want %d), %s %d", port, s, grew, probesPastLeaf1(p), otherSpine(s), after[otherSpine(s)][name])
		}
	}
	used := map[string]int{}
	for _, s := range spineOf {
		used[s]++
	}
	t.Logf("%s: %d source ports via spine1, %d via spine2", fam.name, used["spine1"], used["spine2"])
	if len(used) != 2 {
		t.Errorf("all %d source ports hashed onto one spine: %v", len(closPorts), used)
	}
	return spineOf
}

func equalCounts(a, b map[string]map[string]uint64) bool {
	for s := range a {
		for k, v := range a[s] {
			if b[s][k] != v {
				return false
			}
		}
	}
	return len(a) == len(b)
}

// spine1 drops the time-exceeded it sends: a flow through it has hop 2
// unknown with the reason while leaf2 and host2 still answer, and spine1's
// counter shows the probes did cross it.
func (c *clos) icmpDropped(t *testing.T, via map[string]map[uint16]string) {
	t.Helper()
	c.nft(t, "spine1", "table inet ptdrop {\nchain out {\ntype filter hook output priority 0; policy accept;\n"+
		"icmp type time-exceeded drop\nicmpv6 type time-exceeded drop\n}\n}\n")
	t.Cleanup(func() { sh(t, "ip", "netns", "exec", c.ns["spine1"], "nft", "delete", "table", "inet", "ptdrop") })
	o := closOpts
	o.ProbesPerTTL = 2
	for _, fam := range closFamilies {
		port, ok := uint16(0), false
		for _, p := range closPorts {
			if via[fam.name][p] == "spine1" {
				port, ok = p, true
				break
			}
		}
		if !ok {
			t.Errorf("%s: no source port went via spine1 (see the %s subtest)", fam.name, fam.name)
			continue
		}
		before := c.spineCounts(t)
		p := c.traceFrom(t, fam, []uint16{port}, func(ctx context.Context, f Flow) (Path, error) { return Trace(ctx, f, o) })[0]
		after := c.spineCounts(t)
		roles, name := c.roles(p), counterName(fam, port)
		t.Logf("%s sport %d with spine1's ICMP dropped: %v = %s; hop 2: %q; spine1 +%d pkts", fam.name, port, roles, p, p.Hops[1].Reason,
			after["spine1"][name]-before["spine1"][name])
		if !slices.Equal(roles, []string{"leaf1", "?", "leaf2", "host2"}) || !p.Reached || p.Complete {
			t.Errorf("hops %v, reached %v complete %v: %s", roles, p.Reached, p.Complete, p.Why)
			continue
		}
		if h := p.Hops[1]; h.Probes != 2 || !strings.HasPrefix(h.Reason, "no ICMP answer to 2 probe(s) within 300ms each") {
			t.Errorf("hop 2: %+v", h)
		}
		if grew := after["spine1"][name] - before["spine1"][name]; grew != probesPastLeaf1(p) || grew != 4 {
			t.Errorf("spine1 counted %d probes of the flow, want %d (2 at TTL 2, then 1 each)", grew, probesPastLeaf1(p))
		}
	}
}

// host2 drops datagrams to 4791 as a RoCE endpoint does: the path ends at
// leaf2, complete but not reached, and says why.
func (c *clos) roceSilent(t *testing.T) {
	c.nft(t, "host2", "table inet ptroce {\nchain in {\ntype filter hook input priority 0; policy accept;\nudp dport 4791 drop\n}\n}\n")
	t.Cleanup(func() { sh(t, "ip", "netns", "exec", c.ns["host2"], "nft", "delete", "table", "inet", "ptroce") })
	for _, fam := range closFamilies {
		p := c.traceFrom(t, fam, closPorts[:1], func(ctx context.Context, f Flow) (Path, error) { return Trace(ctx, f, closOpts) })[0]
		roles := c.roles(p)
		t.Logf("%s sport %d to a silent host2: %v = %s; %s", fam.name, closPorts[0], roles, p, p.Why)
		if len(roles) != 3 || roles[0] != "leaf1" || !strings.HasPrefix(roles[1], "spine") || roles[2] != "leaf2" ||
			p.Reached || !p.Complete || !strings.HasPrefix(p.Why, "the destination did not answer (RoCE endpoints drop non-RDMA datagrams to 4791): TTL 4 to 5 were silent") {
			t.Errorf("hops %v, reached %v complete %v: %s", roles, p.Reached, p.Complete, p.Why)
		}
	}
}

// hopLoss drops every 19th UDP datagram leaf1 forwards to spine1: a flow
// through spine1 loses exactly that share of its probes from TTL 2 (spine1)
// on, and none at TTL 1; a flow through spine2 loses none.
func (c *clos) hopLoss(t *testing.T, via map[uint16]string) {
	t.Helper()
	port := map[string]uint16{}
	for p, s := range via {
		if port[s] == 0 || p < port[s] {
			port[s] = p
		}
	}
	c.nft(t, "leaf1", `table inet ptloss {
		chain f { type filter hook forward priority 0; oifname "spine1" meta l4proto udp numgen inc mod 19 == 0 drop; }
	}`)
	defer sh(t, "ip", "netns", "exec", c.ns["leaf1"], "nft", "delete", "table", "inet", "ptloss")
	const probes = 190 // TTL 2..4 cross leaf1 -> spine1: 570 datagrams, 30 dropped
	o := LossOptions{Probes: probes, Pacing: 200 * time.Microsecond, Timeout: 100 * time.Millisecond}
	fam := closFamilies[0]
	for _, s := range []string{"spine1", "spine2"} {
		var got []HopCount
		var err error
		if e := c.in("host1", func() {
			got, err = MeasureLoss(context.Background(), Flow{Src: fam.src, Dst: fam.dst, SrcPort: port[s]}, 4, o)
		}); e != nil {
			t.Fatal(e)
		}
		if err != nil {
			t.Fatalf("via %s: %v", s, err)
		}
		t.Logf("via %s (port %d): %+v", s, port[s], got)
		lost := 0
		for _, h := range got {
			if h.Sent != probes {
				t.Errorf("via %s TTL %d: sent %d, want %d", s, h.TTL, h.Sent, probes)
			}
			if h.TTL > 1 {
				lost += h.Sent - h.Answered
			}
			if (s == "spine2" || h.TTL == 1) && h.Answered != h.Sent {
				t.Errorf("via %s TTL %d: %d of %d answered, want all", s, h.TTL, h.Answered, h.Sent)
			}
			if s == "spine1" && h.TTL > 1 && h.Sent-h.Answered < 5 {
				t.Errorf("via spine1 TTL %d: %d lost, want about 10", h.TTL, h.Sent-h.Answered)
			}
		}
		if s == "spine1" && lost != 3*probes/19 {
			t.Errorf("via spine1: %d probes lost past leaf1, want %d", lost, 3*probes/19)
		}
	}
}
