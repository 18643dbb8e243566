package liveplan

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
)

func TestLinkFlows(t *testing.T) {
	ms := testFabric(64, 16, 2)
	for i := range ms {
		for _, r := range ms[i].Rails {
			ms[i].Addrs = append(ms[i].Addrs, fabric.ProbeAddr{Node: ms[i].Name, Device: "mlx5_" + string(rune('0'+r)), QPN: uint32(10 + i)})
		}
	}
	pl, _, err := New(1, ms, Params{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	links := []Link{
		{Src: "node-0000", Dst: "node-0020", Rail: 0, Label: 0x1234},
		{Src: "node-0000", Dst: "node-0040", Rail: 0, Label: 0x99},
		{Src: "node-0020", Dst: "node-0000", Rail: 0, Label: 0x4321},
		{Src: "node-0000", Dst: "node-0020", Rail: 0, Label: 0x1234}, // twice: kept once
	}
	cov, err := pl.SetLinks(links)
	if err != nil {
		t.Fatal(err)
	}
	if cov.LinkFlows != 3 || cov.MinLinkRate != 8 || cov.MaxRate > pl.Params.RatePerHCA {
		t.Errorf("coverage %+v: want 3 link flows at 8/s within the %v/s cap", cov, pl.Params.RatePerHCA)
	}
	at := t0.Add(25 * time.Second)
	var got []Target
	rate := 0.0
	for _, tg := range pl.Targets("node-0000", 0, at) {
		rate += tg.Rate
		if tg.Label != 0 {
			got = append(got, tg)
		}
	}
	if len(got) != 2 || got[0].Node != "node-0020" || got[0].Label != 0x1234 || got[0].Addr.QPN != 30 || got[1].Node != "node-0040" || got[1].Rate != 8 {
		t.Errorf("node-0000's link targets: %+v", got)
	}
	if rate > pl.Params.RatePerHCA+1e-9 {
		t.Errorf("node-0000 probes at %.1f/s, over the %v/s cap", rate, pl.Params.RatePerHCA)
	}
	for _, tg := range pl.Targets("node-0000", 1, at) {
		if tg.Label != 0 {
			t.Errorf("rail 1 has no link flows, got %+v", tg)
		}
	}

	// Over the wire: all flows for raft, only its own for a worker.
	back, err := FromWire(pl.Wire())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Targets("node-0000", 0, at), pl.Targets("node-0000", 0, at)) || len(back.Links) != 3 {
		t.Errorf("the plan's link flows changed over the wire: %+v", back.Links)
	}
	own, err := FromWire(pl.WireFor("node-0020"))
	if err != nil {
		t.Fatal(err)
	}
	if len(own.Links) != 1 || own.Links[0].Src != "node-0020" || !reflect.DeepEqual(own.Targets("node-0020", 0, at), pl.Targets("node-0020", 0, at)) {
		t.Errorf("node-0020's copy: %+v", own.Links)
	}

	for _, tc := range []struct {
		l    Link
		want string
	}{
		{Link{Src: "node-0000", Dst: "node-0001", Label: 0}, "flow label 0"},
		{Link{Src: "node-0000", Dst: "node-0001", Label: 1 << 20}, "not in 1..1048575"},
		{Link{Src: "node-0000", Dst: "node-0000", Label: 5}, "does not probe itself"},
		{Link{Src: "node-0000", Dst: "nobody", Label: 5}, "nobody is not a member"},
		{Link{Src: "node-0003", Dst: "node-0000", Rail: 1, Label: 5}, "node-0003 is not a member with that rail"},
		{Link{Src: "node-0000", Dst: "node-0001", Rail: 7, Label: 5}, "no member has rail 7"},
	} {
		if _, err := pl.SetLinks([]Link{tc.l}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.l, err, tc.want)
		}
	}
}

// A crowded HCA's link flows share what its group leaves under the cap,
// never below one probe a second.
func TestLinkFlowsShareTheCap(t *testing.T) {
	ms := testFabric(48, 16, 1)
	// node-0003 has no rail 0 (testFabric): 14 group peers x 2 = 28/s of 40.
	pl, _, err := New(1, ms, Params{RatePerHCA: 40, GroupRate: 2}, t0)
	if err != nil {
		t.Fatal(err)
	}
	var links []Link
	for i := 16; i < 20; i++ {
		links = append(links, Link{Src: "node-0000", Dst: ms[i].Name, Label: uint32(i)})
	}
	cov, err := pl.SetLinks(links)
	if err != nil {
		t.Fatal(err)
	}
	if cov.MinLinkRate != 3 {
		t.Errorf("4 link flows in the 12/s left: %v/s each, want 3", cov.MinLinkRate)
	}
}

func TestFlowTrackerKeepsToItsLabel(t *testing.T) {
	plain := NewTracker("b", 0, time.Second)
	flow := NewFlowTracker("b", 0, 0xabcde, time.Second)
	s1, s2 := plain.Send(t0), flow.Send(t0)
	if fabric.SeqFlowLabel(s1) != 0 || fabric.SeqFlowLabel(s2) != 0xabcde {
		t.Fatalf("labels carried: %d, %#x", fabric.SeqFlowLabel(s1), fabric.SeqFlowLabel(s2))
	}
	for _, tr := range []*Tracker{plain, flow} { // each answer reaches both; only its own counts
		tr.Answer(s1, time.Microsecond)
		tr.Answer(s2, 2*time.Microsecond)
	}
	a, b := plain.Flush(1), flow.Flush(1)
	if a.Answered != 1 || a.Late != 0 || a.Label != 0 || b.Answered != 1 || b.Late != 0 || b.Label != 0xabcde {
		t.Errorf("plain %+v, flow %+v", a, b)
	}
}
