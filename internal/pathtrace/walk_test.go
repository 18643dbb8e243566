package pathtrace

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

var (
	host1 = netip.MustParseAddr("10.0.1.2")
	leaf1 = netip.MustParseAddr("10.0.1.1")
	spine = netip.MustParseAddr("10.0.11.2")
	leaf2 = netip.MustParseAddr("10.0.21.1")
	host2 = netip.MustParseAddr("10.0.2.2")
	flow  = Flow{Src: host1, Dst: host2, SrcPort: 49152, DstPort: RoCEPort}
)

// scripted answers each probe from a list per TTL; a TTL without a script
// (or past its end) is silent.
type scripted struct {
	byTTL map[int][]*answer // nil entry: that probe is unanswered
	sent  map[int]int
	fail  func(ttl int) error
}

func (s *scripted) probe(ttl int, _ time.Duration) (answer, bool, error) {
	if s.sent == nil {
		s.sent = map[int]int{}
	}
	n := s.sent[ttl]
	s.sent[ttl]++
	if s.fail != nil {
		if err := s.fail(ttl); err != nil {
			return answer{}, false, err
		}
	}
	if list := s.byTTL[ttl]; n < len(list) && list[n] != nil {
		return *list[n], true, nil
	}
	return answer{}, false, nil
}

func (s *scripted) close() {}

func te(from netip.Addr) *answer {
	return &answer{kind: timeExceeded, from: from, text: "time exceeded", rtt: time.Millisecond}
}

func unreach(from netip.Addr) *answer {
	return &answer{kind: portUnreachable, from: from, text: "port unreachable"}
}

var quick = Options{MaxTTL: 8, ProbesPerTTL: 2, MaxSilent: 3, Timeout: time.Millisecond, Pacing: time.Microsecond, Budget: time.Minute}

func walkScript(t *testing.T, ctx context.Context, s *scripted, o Options) Path {
	t.Helper()
	p, err := walk(ctx, s, flow, o.withDefaults(), newPacer(o.Pacing))
	if err != nil {
		t.Fatal(err)
	}
	if p.At.IsZero() {
		t.Error("path has no time")
	}
	return p
}

func wantHops(t *testing.T, p Path, want ...netip.Addr) {
	t.Helper()
	if len(p.Hops) != len(want) {
		t.Fatalf("hops %s (%d), want %d: %s", p, len(p.Hops), len(want), p.Why)
	}
	for i, h := range p.Hops {
		if h.TTL != i+1 || h.Addr != want[i] {
			t.Errorf("hop %d: TTL %d addr %v, want TTL %d addr %v", i, h.TTL, h.Addr, i+1, want[i])
		}
		if h.Known() == (h.Reason != "") {
			t.Errorf("hop %d: known %v with reason %q", h.TTL, h.Known(), h.Reason)
		}
	}
}

// A hop whose ICMP is dropped is unknown with the reason, and the hops
// past it still resolve.
func TestWalkFilteredHop(t *testing.T) {
	s := &scripted{byTTL: map[int][]*answer{1: {te(leaf1)}, 3: {te(leaf2)}, 4: {unreach(host2)}}}
	p := walkScript(t, context.Background(), s, quick)
	wantHops(t, p, leaf1, netip.Addr{}, leaf2, host2)
	if h := p.Hops[1]; h.Probes != 2 || !strings.Contains(h.Reason, "no ICMP answer to 2 probe(s)") || !strings.Contains(h.Reason, "filtered or rate-limited") {
		t.Errorf("unknown hop: %+v", h)
	}
	if !p.Reached || p.Complete || !strings.Contains(p.Why, "port unreachable at TTL 4") {
		t.Errorf("reached %v complete %v why %q", p.Reached, p.Complete, p.Why)
	}
}

// A RoCE destination drops the probes: the silent TTLs past the last hop
// leave the path, which is complete but not reached, and says why.
func TestWalkSilentDestination(t *testing.T) {
	s := &scripted{byTTL: map[int][]*answer{1: {te(leaf1)}, 2: {te(spine)}, 3: {te(leaf2)}}}
	p := walkScript(t, context.Background(), s, quick)
	wantHops(t, p, leaf1, spine, leaf2)
	if p.Reached || !p.Complete || !strings.Contains(p.Why, "RoCE endpoints drop non-RDMA datagrams to 4791") ||
		!strings.Contains(p.Why, "TTL 4 to 6 were silent after 10.0.21.1") {
		t.Errorf("reached %v complete %v why %q", p.Reached, p.Complete, p.Why)
	}
	if s.sent[7] != 0 {
		t.Errorf("probed TTL 7 after %d silent hops", quick.MaxSilent)
	}
}

func TestWalkNothingAnswers(t *testing.T) {
	p := walkScript(t, context.Background(), &scripted{}, quick)
	wantHops(t, p, netip.Addr{}, netip.Addr{}, netip.Addr{})
	if p.Reached || p.Complete || !strings.Contains(p.Why, "no hop answered from TTL 1 to 3") {
		t.Errorf("reached %v complete %v why %q", p.Reached, p.Complete, p.Why)
	}
}

func TestWalkTTLTooSmall(t *testing.T) {
	s := &scripted{byTTL: map[int][]*answer{1: {te(leaf1)}, 2: {te(spine)}, 3: {te(leaf2)}}}
	o := quick
	o.MaxTTL = 2
	p := walkScript(t, context.Background(), s, o)
	wantHops(t, p, leaf1, spine)
	if p.Reached || p.Complete || !strings.HasPrefix(p.Why, "TTL too small: the destination was not reached within MaxTTL 2") {
		t.Errorf("reached %v complete %v why %q", p.Reached, p.Complete, p.Why)
	}
}

// A router's unreachable ends the trace and is named.
func TestWalkRouterUnreachable(t *testing.T) {
	prohibited := &answer{kind: unreachable, from: spine, text: "destination unreachable: communication administratively prohibited (type 3 code 13)"}
	s := &scripted{byTTL: map[int][]*answer{1: {te(leaf1)}, 2: {prohibited}}}
	p := walkScript(t, context.Background(), s, quick)
	wantHops(t, p, leaf1, spine)
	if p.Reached || p.Complete || !strings.Contains(p.Why, "10.0.11.2 at TTL 2 answered destination unreachable: communication administratively prohibited") {
		t.Errorf("reached %v complete %v why %q", p.Reached, p.Complete, p.Why)
	}
}

// A probe lost to a rate limit is asked again; the hop is known from the
// second answer and says it took two probes.
func TestWalkSecondProbeAnswers(t *testing.T) {
	s := &scripted{byTTL: map[int][]*answer{1: {nil, te(leaf1)}, 2: {unreach(host2)}}}
	p := walkScript(t, context.Background(), s, quick)
	wantHops(t, p, leaf1, host2)
	if p.Hops[0].Probes != 2 || p.Hops[1].Probes != 1 || !p.Reached || !p.Complete {
		t.Errorf("path %+v", p)
	}
}

// The time bound ends a trace with what it found and where it stopped.
func TestWalkBudget(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	bound := errors.New("the trace's time bound (Budget 1s) ran out")
	s := &scripted{byTTL: map[int][]*answer{1: {te(leaf1)}}, fail: func(ttl int) error {
		if ttl == 2 {
			cancel(bound)
			return context.Cause(ctx)
		}
		return nil
	}}
	p := walkScript(t, ctx, s, quick)
	wantHops(t, p, leaf1, netip.Addr{})
	if p.Complete || p.Reached || p.Why != "stopped at TTL 2: "+bound.Error() || !strings.Contains(p.Hops[1].Reason, "the trace ended before this hop answered") {
		t.Errorf("why %q, hop 2 %+v", p.Why, p.Hops[1])
	}
}

// A local failure (not the network's) is an error, not a path.
func TestWalkLocalError(t *testing.T) {
	refused := errors.New("pathtrace: sending to 10.0.2.2:4791 is refused by this host's firewall")
	s := &scripted{fail: func(int) error { return refused }}
	if _, err := walk(context.Background(), s, flow, quick.withDefaults(), newPacer(time.Microsecond)); !errors.Is(err, refused) {
		t.Fatalf("err %v, want %v", err, refused)
	}
}

func TestFlowValidate(t *testing.T) {
	for _, c := range []struct {
		f    Flow
		want string
	}{
		{Flow{Dst: host2}, "flow src_ip is empty"},
		{Flow{Src: host1, Dst: netip.MustParseAddr("fd00::2")}, "different families"},
		{Flow{Src: netip.MustParseAddr("fe80::1"), Dst: netip.MustParseAddr("fe80::2")}, "src_ip fe80::1 is link-local"},
		{Flow{Src: host1, Dst: netip.MustParseAddr("224.0.0.5")}, "dst_ip 224.0.0.5 is not a unicast address"},
	} {
		if err := c.f.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.f, err, c.want)
		}
	}
	mapped := Flow{Src: netip.MustParseAddr("::ffff:10.0.1.2"), Dst: host2, SrcPort: 49152}
	if err := mapped.Validate(); err != nil || mapped.normal() != flow {
		t.Errorf("a GID's IPv4-mapped address: %v, %+v", err, mapped.normal())
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (Options{}).Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{MaxTTL: 256}, "Options.MaxTTL 256"},
		{Options{ProbesPerTTL: -1}, "Options.ProbesPerTTL -1"},
		{Options{MaxTTL: 2, MaxSilent: 3}, "Options.MaxSilent 3"},
		{Options{Timeout: time.Microsecond}, "Options.Timeout 1µs"},
		{Options{Pacing: -time.Second}, "Options.Pacing -1s"},
		{Options{Timeout: time.Second, Budget: time.Millisecond}, "Options.Budget 1ms"},
	} {
		if err := c.o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}
