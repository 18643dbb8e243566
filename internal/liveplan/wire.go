package liveplan

import (
	"fmt"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// Wire is the plan as raft and the worker API carry it.
func (pl *Plan) Wire() wire.LivePlan {
	p := pl.Params
	w := wire.LivePlan{ID: pl.ID, Start: pl.Start, RatePerHCA: p.RatePerHCA, GroupRate: p.GroupRate, Window: p.Window,
		ProbesPerWindow: p.ProbesPerWindow, Period: p.Period, LinkRate: p.LinkRate, Members: make([]wire.LiveMember, len(pl.Members))}
	for i, m := range pl.Members {
		wm := wire.LiveMember{Name: m.Name, Group: m.Group, Rails: m.Rails}
		for _, a := range m.Addrs {
			wm.Addrs = append(wm.Addrs, wire.LiveAddr{Node: a.Node, Device: a.Device, GID: a.GID, LID: uint64(a.LID),
				QPN: uint64(a.QPN), QKey: uint64(a.QKey)})
		}
		w.Members[i] = wm
	}
	at := make(map[string]uint32, len(pl.Members))
	for i, m := range pl.Members {
		at[m.Name] = uint32(i)
	}
	for _, l := range pl.Links {
		w.Links = append(w.Links, wire.LiveLink{Src: at[l.Src], Dst: at[l.Dst], Rail: l.Rail, Label: l.Label})
	}
	return w
}

// WireFor is the plan as node needs it: only its own link flows, which
// are all Targets reads of them. At 4,096 x 8 the flows of every node
// would triple each worker's copy of the plan.
func (pl *Plan) WireFor(node string) wire.LivePlan {
	own := *pl
	own.Links = nil
	for _, l := range pl.Links {
		if l.Src == node {
			own.Links = append(own.Links, l)
		}
	}
	return own.Wire()
}

// FromWire rebuilds a plan, checking it as New does (a bad plan from a
// newer coordinator, or a corrupted one, is refused, not half-run).
func FromWire(w wire.LivePlan) (*Plan, error) {
	ms := make([]Member, len(w.Members))
	for i, wm := range w.Members {
		m := Member{Name: wm.Name, Group: wm.Group, Rails: wm.Rails}
		for _, a := range wm.Addrs {
			m.Addrs = append(m.Addrs, fabric.ProbeAddr{Node: a.Node, Device: a.Device, GID: a.GID, LID: uint16(a.LID),
				QPN: uint32(a.QPN), QKey: uint32(a.QKey)})
		}
		ms[i] = m
	}
	pl, _, err := New(w.ID, ms, Params{RatePerHCA: w.RatePerHCA, GroupRate: w.GroupRate, Window: w.Window,
		ProbesPerWindow: w.ProbesPerWindow, Period: w.Period, LinkRate: w.LinkRate}, w.Start)
	if err != nil || len(w.Links) == 0 {
		return pl, err
	}
	links := make([]Link, len(w.Links))
	for i, l := range w.Links {
		if int(l.Src) >= len(pl.Members) || int(l.Dst) >= len(pl.Members) {
			return nil, fmt.Errorf("live plan %d: link flow %d names member %d of %d", w.ID, i, max(l.Src, l.Dst), len(pl.Members))
		}
		links[i] = Link{Src: pl.Members[l.Src].Name, Dst: pl.Members[l.Dst].Name, Rail: l.Rail, Label: l.Label}
	}
	if _, err := pl.SetLinks(links); err != nil {
		return nil, err
	}
	return pl, nil
}

// WireSummary and SummaryFromWire convert one summary.
func WireSummary(s Summary) wire.LiveSummary {
	return wire.LiveSummary{Node: s.Node, Rail: s.Rail, Window: s.Window, Sent: s.Sent, Answered: s.Answered, Lost: s.Lost,
		Late: s.Late, OutOfOrder: s.OutOfOrder, P50Ns: s.P50Ns, P99Ns: s.P99Ns, MaxNs: s.MaxNs, Held: s.Held,
		LocalDown: s.LocalDown, LocalDownFix: s.LocalDownFix, Label: s.Label, InGroup: s.InGroup}
}

func SummaryFromWire(w wire.LiveSummary) Summary {
	return Summary{Node: w.Node, Rail: w.Rail, Window: w.Window, Sent: w.Sent, Answered: w.Answered, Lost: w.Lost,
		Late: w.Late, OutOfOrder: w.OutOfOrder, P50Ns: w.P50Ns, P99Ns: w.P99Ns, MaxNs: w.MaxNs, Held: w.Held,
		LocalDown: w.LocalDown, LocalDownFix: w.LocalDownFix, Label: w.Label, InGroup: w.InGroup}
}
