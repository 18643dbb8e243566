package chaos

import (
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/rigs/scale"
)

// answerPair answers src → dst on both rails as the fleet does, sent at.
func answerPair(l *ledger, id string, round int, src, dst string, at time.Time) wire.TaskResult {
	t := wire.Task{SweepID: id, Round: round, Src: src, Dst: dst, Params: probe.TestParams{LatencyIters: 100},
		Rails:    []probe.RailPair{{Rail: 0}, {Rail: 1}},
		Deadline: at.Add(l.pairTimeout * 9 / 10)}
	res := scale.NullResult(t)
	l.answer(t, res, connKey{})
	return res
}

func cellOf(res wire.TaskResult, rail int) matrixCell {
	c := matrixCell{Src: res.Src, Dst: res.Dst, Rail: rail, Round: res.Round, Class: "ok", Verdict: "ok"}
	c.Latency = &struct {
		Samples int `json:"samples"`
	}{res.Rails[rail].Latency.Samples}
	return c
}

func TestLedgerVerify(t *testing.T) {
	names := []string{"a", "b", "c"}
	base := time.Unix(1000, 0)
	build := func() (*ledger, []wire.TaskResult) {
		l := newLedger(names, 2, 10*time.Second)
		var rs []wire.TaskResult
		for i, p := range [][2]string{{"a", "b"}, {"b", "a"}, {"a", "c"}, {"c", "a"}, {"b", "c"}, {"c", "b"}} {
			rs = append(rs, answerPair(l, "s", i/2, p[0], p[1], base.Add(time.Duration(i)*time.Second)))
		}
		return l, rs
	}
	cells := func(rs []wire.TaskResult) []matrixCell {
		var out []matrixCell
		for _, r := range rs {
			out = append(out, cellOf(r, 0), cellOf(r, 1))
		}
		return out
	}
	cases := []struct {
		name   string
		edit   func(l *ledger, cs []matrixCell) []matrixCell
		clean  bool
		lost   int
		dup    int
		phan   int
		unseen int
	}{
		{"complete", func(_ *ledger, cs []matrixCell) []matrixCell { return cs }, true, 0, 0, 0, 0},
		{"a cell missing", func(_ *ledger, cs []matrixCell) []matrixCell { return cs[1:] }, false, 1, 0, 0, 1},
		{"a cell twice", func(_ *ledger, cs []matrixCell) []matrixCell { return append(cs, cs[3]) }, false, 0, 1, 0, 0},
		{"figures nobody gave", func(_ *ledger, cs []matrixCell) []matrixCell { cs[2].Latency.Samples += 3; return cs }, false, 0, 0, 1, 0},
		{"a re-run answer kept", func(l *ledger, cs []matrixCell) []matrixCell {
			again := answerPair(l, "s", 0, "a", "b", base.Add(time.Minute))
			cs[0], cs[1] = cellOf(again, 0), cellOf(again, 1)
			return cs
		}, true, 0, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, rs := build()
			v := l.verifier("s", nil)
			for _, c := range tc.edit(l, cells(rs)) {
				v.add(&c)
			}
			got := v.finish(12, 12)
			if got.clean() != tc.clean || got.lost != tc.lost || got.dup != tc.dup || got.phantom != tc.phan || got.unseen != tc.unseen {
				t.Fatalf("%+v", got)
			}
		})
	}
}

func TestLedgerResume(t *testing.T) {
	l := newLedger([]string{"a", "b", "c", "d"}, 1, 10*time.Second)
	base := time.Unix(1000, 0)
	// The old leader ran rounds 0-3 (3 only partly) before the kill at
	// 10 s; the new one re-ran 3 and went on with 4 and 5.
	for r := range 4 {
		answerPair(l, "s", r, "a", "b", base.Add(time.Duration(2*r)*time.Second))
	}
	killed := base.Add(10 * time.Second)
	for r := 3; r < 6; r++ {
		answerPair(l, "s", r, "c", "d", killed.Add(time.Duration(r)*100*time.Millisecond))
	}
	got := l.resume("s", killed, afterKill(killed))
	if got.lastCommitted != 2 || got.firstResumed != 3 || got.rerun != 1 || got.rerunDone != 0 || got.dispatchAfter != 300*time.Millisecond {
		t.Fatalf("%+v", got)
	}
	owners := map[connKey]string{{1, 2}: "old", {3, 4}: "new"}
	who := byConn(owners, "new")
	if who(taskRec{conn: connKey{3, 4}}) != 1 || who(taskRec{conn: connKey{1, 2}}) != 0 || who(taskRec{conn: connKey{3, 2}}) != -1 {
		t.Fatal("byConn")
	}
}

// A new leader resumed right at the first round the old one left
// uncommitted, or nowhere when the old one had committed every round.
func TestResumedRight(t *testing.T) {
	for _, c := range []struct {
		r    resume
		want bool
	}{
		{resume{lastCommitted: 2, firstResumed: 3}, true},
		{resume{lastCommitted: 2, firstResumed: 2}, false},
		{resume{lastCommitted: 2, firstResumed: 4}, false},
		{resume{lastCommitted: 9, firstResumed: -1}, true}, // every round of 10 committed
		{resume{lastCommitted: 7, firstResumed: -1}, false},
		{resume{lastCommitted: 8, firstResumed: -1}, false}, // the last round left to no one
		{resume{lastCommitted: 9, firstResumed: 5}, false},  // committed rounds run again
	} {
		if got := c.r.resumedRight(10); got != c.want {
			t.Errorf("%v: %v, want %v", c.r, got, c.want)
		}
	}
}
