package wire

import (
	"reflect"
	"testing"
	"time"
)

// A live plan of version 1 (no link flows) and live summaries of version 2
// (no flow label) still read: a coordinator restored from an older
// snapshot, or collecting from a worker not yet upgraded. The old layouts
// are written out here on purpose: they are frozen.
func TestLiveReadsOlderVersions(t *testing.T) {
	v1 := &Codec[LivePlan]{name: "live plan", version: 1, put: func(w *writer, p *LivePlan) {
		w.u64(p.ID)
		w.time(p.Start)
		w.f64(p.RatePerHCA)
		w.f64(p.GroupRate)
		w.dur(p.Window)
		w.int(p.ProbesPerWindow)
		w.dur(p.Period)
		putList(w, p.Members, func(w *writer, m *LiveMember) {
			w.str(m.Name)
			w.str(m.Group)
			w.ints(m.Rails)
			putList(w, m.Addrs, func(w *writer, a *LiveAddr) {
				w.str(a.Node)
				w.str(a.Device)
				w.str(a.GID)
				w.u64(a.LID)
				w.u64(a.QPN)
				w.u64(a.QKey)
			})
		})
	}}
	plan := LivePlan{ID: 3, Start: time.Unix(1e9, 0).UTC(), RatePerHCA: 50, GroupRate: 1, Window: 10 * time.Second, ProbesPerWindow: 5,
		Members: []LiveMember{{Name: "a", Group: "leaf1", Rails: []int{0}, Addrs: []LiveAddr{{Node: "a", Device: "mlx5_0", QPN: 9, QKey: 7}}},
			{Name: "b", Group: "leaf2", Rails: []int{0}}}}
	got, err := LivePlanMsg.Decode(v1.Append(nil, &plan))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, plan) {
		t.Fatalf("version 1 plan read as %+v, want %+v", got, plan)
	}
	plan.LinkRate, plan.Links = 8, []LiveLink{{Src: 0, Dst: 1, Rail: 0, Label: 0xabcde}, {Src: 1, Dst: 0, Label: 1}}
	if got, err = LivePlanMsg.Decode(LivePlanMsg.Append(nil, &plan)); err != nil || !reflect.DeepEqual(got, plan) {
		t.Fatalf("plan with links read as %+v, %v; want %+v", got, err, plan)
	}

	v2 := &Codec[LiveSummaries]{name: "live summaries", version: 2, put: func(w *writer, s *LiveSummaries) {
		w.u64(s.PlanID)
		w.i64(s.Latest)
		putList(w, s.Summaries, func(w *writer, x *LiveSummary) {
			w.str(x.Node)
			w.int(x.Rail)
			w.i64(x.Window)
			w.int(x.Sent)
			w.int(x.Answered)
			w.int(x.Lost)
			w.int(x.Late)
			w.int(x.OutOfOrder)
			w.f64(x.P50Ns)
			w.f64(x.P99Ns)
			w.f64(x.MaxNs)
			w.flag(x.Held)
			w.str(x.LocalDown)
			w.str(x.LocalDownFix)
		})
	}}
	sums := LiveSummaries{PlanID: 3, Latest: 12, Summaries: []LiveSummary{{Node: "b", Rail: 0, Window: 12, Sent: 80, Answered: 78, Lost: 2, P50Ns: 4000}}}
	gotS, err := LiveSummariesMsg.Decode(v2.Append(nil, &sums))
	if err != nil || !reflect.DeepEqual(gotS, sums) {
		t.Fatalf("version 2 summaries read as %+v, %v; want %+v", gotS, err, sums)
	}
	sums.Summaries[0].Label, sums.Summaries[0].InGroup = 0xfffff, true
	if gotS, err = LiveSummariesMsg.Decode(LiveSummariesMsg.Append(nil, &sums)); err != nil || !reflect.DeepEqual(gotS, sums) {
		t.Fatalf("labelled summaries read as %+v, %v; want %+v", gotS, err, sums)
	}
}
