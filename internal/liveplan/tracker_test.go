package liveplan

import (
	"math"
	"testing"
	"time"
)

func TestTrackerAccounts(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		run  func(tr *Tracker, now time.Time)
		want Summary
	}{
		{"all answered", func(tr *Tracker, now time.Time) {
			for i := 0; i < 10; i++ {
				seq := tr.Send(now)
				tr.Answer(seq, 10*time.Microsecond)
			}
		}, Summary{Sent: 10, Answered: 10}},
		{"three never answered", func(tr *Tracker, now time.Time) {
			for i := 0; i < 10; i++ {
				seq := tr.Send(now)
				if i%3 != 1 {
					tr.Answer(seq, 20*time.Microsecond)
				}
			}
			tr.Expire(now.Add(3 * time.Second))
		}, Summary{Sent: 10, Answered: 7, Lost: 3}},
		{"not yet expired is not lost", func(tr *Tracker, now time.Time) {
			tr.Send(now)
			tr.Expire(now.Add(ms))
		}, Summary{Sent: 1}},
		{"answer after expiry is late", func(tr *Tracker, now time.Time) {
			seq := tr.Send(now)
			tr.Expire(now.Add(3 * time.Second))
			tr.Answer(seq, 4*time.Second)
			tr.Answer(seq+5, ms) // never sent: ignored
		}, Summary{Sent: 1, Lost: 1, Late: 1}},
		{"reordered answers", func(tr *Tracker, now time.Time) {
			a, b, c := tr.Send(now), tr.Send(now), tr.Send(now)
			tr.Answer(c, ms)
			tr.Answer(a, ms)
			tr.Answer(b, ms)
		}, Summary{Sent: 3, Answered: 3, OutOfOrder: 2}},
		{"a silent peer costs a fixed ring", func(tr *Tracker, now time.Time) {
			for i := 0; i < 1000; i++ {
				tr.Send(now)
			}
		}, Summary{Sent: 1000, Lost: 1000 - maxOutstanding}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker("b", 2, 2*time.Second)
			tc.run(tr, time.Unix(100, 0))
			got := tr.Flush(9)
			got.P50Ns, got.P99Ns, got.MaxNs = 0, 0, 0
			tc.want.Node, tc.want.Rail, tc.want.Window = "b", 2, 9
			if got != tc.want {
				t.Errorf("summary %+v, want %+v", got, tc.want)
			}
			if again := tr.Flush(10); again.Sent != 0 || again.Answered != 0 {
				t.Errorf("Flush did not start a new window: %+v", again)
			}
		})
	}
}

func TestTrackerPercentiles(t *testing.T) {
	tr := NewTracker("b", 0, time.Second)
	now := time.Unix(100, 0)
	// 98 answers at 5 µs, 2 at 800 µs: p50 is 5 µs, p99 the tail.
	for i := 0; i < 100; i++ {
		seq := tr.Send(now)
		rtt := 5 * time.Microsecond
		if i%50 == 7 {
			rtt = 800 * time.Microsecond
		}
		tr.Answer(seq, rtt)
	}
	s := tr.Flush(0)
	if math.Abs(s.P50Ns-5000)/5000 > 0.16 {
		t.Errorf("p50 %v ns, want ~5000", s.P50Ns)
	}
	if math.Abs(s.P99Ns-800000)/800000 > 0.16 || s.P99Ns > s.MaxNs {
		t.Errorf("p99 %v ns (max %v), want ~800000 and never over the max", s.P99Ns, s.MaxNs)
	}
	if s.LossRatio() != 0 {
		t.Errorf("loss ratio %v", s.LossRatio())
	}
}
