package pathtrace

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// lossy answers every TTL but drops every dropEvery-th probe from TTL
// from on, as a link before hop from would.
type lossy struct {
	from, dropEvery int
	sent            map[int]int
	order           []int
}

func (l *lossy) probe(ttl int, _ time.Duration) (answer, bool, error) {
	if l.sent == nil {
		l.sent = map[int]int{}
	}
	l.sent[ttl]++
	l.order = append(l.order, ttl)
	if ttl >= l.from && l.sent[ttl]%l.dropEvery == 0 {
		return answer{}, false, nil
	}
	return *te(leaf1), true, nil
}

func (l *lossy) close() {}

func TestCountLossTakesTurnsAndCounts(t *testing.T) {
	l := &lossy{from: 2, dropEvery: 20}
	o := LossOptions{Probes: 100, Pacing: time.Microsecond, Timeout: time.Millisecond}.withDefaults()
	got, err := countLoss(context.Background(), l, 3, o, newPacer(o.Pacing))
	if err != nil {
		t.Fatal(err)
	}
	want := []HopCount{{1, 100, 100}, {2, 100, 95}, {3, 100, 95}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("TTL %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	for i, ttl := range l.order[:6] {
		if ttl != i%3+1 {
			t.Fatalf("probe order %v: the TTLs must take turns", l.order[:6])
		}
	}
}

func TestCountLossKeepsCountsWhenCut(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	n := 0
	s := &scripted{fail: func(int) error {
		if n++; n == 5 {
			cancel(errors.New("budget"))
		}
		return nil
	}}
	o := LossOptions{Probes: 10, Pacing: time.Microsecond, Timeout: time.Millisecond}.withDefaults()
	got, err := countLoss(ctx, s, 2, o, newPacer(o.Pacing))
	if err == nil || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("err %v, want the cause", err)
	}
	if got[0].Sent != 3 || got[1].Sent != 2 {
		t.Errorf("counts %+v, want 3 and 2 sent before the cut", got)
	}
}

func TestLossOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		o    LossOptions
		want string
	}{
		{LossOptions{}, ""},
		{LossOptions{Probes: MaxLossProbes + 1}, "LossOptions.Probes"},
		{LossOptions{Timeout: time.Microsecond}, "LossOptions.Timeout"},
		{LossOptions{Budget: time.Millisecond}, "LossOptions.Budget"},
		{LossOptions{Pacing: -1}, "LossOptions.Pacing"},
	} {
		err := c.o.Validate()
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	if _, err := MeasureLoss(context.Background(), flow, 0, LossOptions{}); err == nil || !strings.Contains(err.Error(), "TTLs") {
		t.Errorf("0 TTLs: %v", err)
	}
}
