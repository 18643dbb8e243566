package matrix

import (
	"fmt"
	"sort"
)

// Cross-rail cells (Src's HCA on rail i to Dst's HCA on rail j != i) take
// the path a rail-optimized fabric sends through the spine, or that NCCL's
// PXN avoids. They are not part of any rail's square matrix, so they are
// judged as one population of their own: a healthy spine hop costs the
// same on every rail combination, and comparing them with same-rail cells
// would flag every one of them.

// isCross reports whether a cell crosses rails.
func isCross(c *Cell) bool { return c.DstRail != nil && *c.DstRail != c.Rail }

// splitCross returns the same-rail cells and the cross-rail ones. Without
// any cross cell it returns cells itself, so a same-rail sweep of 8 M cells
// is not copied.
func splitCross(cells []Cell) (same, cross []Cell) {
	n := 0
	for i := range cells {
		if isCross(&cells[i]) {
			n++
		}
	}
	if n == 0 {
		return cells, nil
	}
	same = make([]Cell, 0, len(cells)-n)
	cross = make([]Cell, 0, n)
	for _, c := range cells {
		if isCross(&c) {
			cross = append(cross, c)
		} else {
			same = append(same, c)
		}
	}
	return same, cross
}

// judgeCross gives every cross cell a verdict and returns them sorted by
// rail, dst rail, src, dst. Cells naming unknown nodes are dropped and
// counted in ignored; the latest cell for a path wins, as on a rail.
func judgeCross(ns []Node, cells []Cell, j *judge) (out []Result, ignored int) {
	byName := make(map[string]int, len(ns))
	for i, n := range ns {
		byName[n.Name] = i
	}
	type key struct {
		s, d, r, dr int
	}
	at := map[key]int{}
	for _, c := range cells {
		s, okS := byName[c.Src]
		d, okD := byName[c.Dst]
		if !okS || !okD || s == d || c.Rail < 0 || c.Rail >= maxRails || *c.DstRail < 0 || *c.DstRail >= maxRails {
			ignored++
			continue
		}
		var r Result
		r.Cell = c
		note := resolveAttempts(&r.Cell)
		normalizeClass(&r.Cell)
		judgeClass(&r, true)
		r.Reason = joinNote(r, note)
		k := key{s, d, c.Rail, *c.DstRail}
		if i, dup := at[k]; dup {
			out[i] = r
			continue
		}
		at[k] = len(out)
		out = append(out, r)
	}
	sort.Slice(out, func(a, b int) bool {
		x, y := &out[a], &out[b]
		if x.Rail != y.Rail {
			return x.Rail < y.Rail
		}
		if *x.DstRail != *y.DstRail {
			return *x.DstRail < *y.DstRail
		}
		if x.Src != y.Src {
			return x.Src < y.Src
		}
		return x.Dst < y.Dst
	})
	st := j.stats(out)
	sample := newSpreadSample(len(out))
	for i := range out {
		if out[i].Verdict == VerdictOK {
			f := figsOf(&out[i])
			sample.add(i, &f, noEnds)
		}
	}
	st.noise = sample.done()
	for i := range out {
		c := &out[i]
		if c.Verdict != VerdictOK {
			continue
		}
		s, d := byName[c.Src], byName[c.Dst]
		rate := portRate(lineRate(ns[s], c.Rail), lineRate(ns[d], *c.DstRail))
		j.cell(c, c.Rail, &st, rate, baseFig{}, noEnds)
	}
	return out, ignored
}

func joinNote(r Result, note string) string {
	if note == "" || r.Verdict == VerdictOK || r.Verdict == VerdictUntested {
		return r.Reason
	}
	return r.Reason + " (" + note + ")"
}

// crossSuspects blames cross-rail paths. When most cells of one rail
// combination are bad the spine hop between those rails is the suspect;
// otherwise each bad node pair is, as a cable would be on a rail.
func crossSuspects(cross []Result) []Suspect {
	type combo struct{ r, dr int }
	type tally struct {
		bad, total int
		by         map[Verdict]int
	}
	byCombo := map[combo]*tally{}
	for i := range cross {
		c := &cross[i]
		k := combo{c.Rail, *c.DstRail}
		t := byCombo[k]
		if t == nil {
			t = &tally{by: map[Verdict]int{}}
			byCombo[k] = t
		}
		if isTested(c) {
			t.total++
		}
		if isBad(c) {
			t.bad++
			t.by[c.Verdict]++
		}
	}
	var out []Suspect
	wide := map[combo]bool{}
	for k, t := range byCombo {
		if t.bad >= 4 && mostly(t.bad, t.total) {
			wide[k] = true
			out = append(out, Suspect{Kind: "rail", Rail: k.r, Bad: t.bad, Total: t.total, Verdict: mostCommon(t.by),
				Reason: fmt.Sprintf("cross-rail path rail %d → rail %d: %d of %d cells bad while the rails themselves are judged separately",
					k.r, k.dr, t.bad, t.total),
				Fix:        fmt.Sprintf("check the spine links and routing between the rail-%d and rail-%d leaves (or use NCCL PXN to keep traffic on its rail)", k.r, k.dr),
				Confidence: share(t.bad, t.total)})
		}
	}
	type pairKey struct{ a, b string }
	pairs := map[pairKey]*Suspect{}
	var order []pairKey
	for i := range cross {
		c := &cross[i]
		if wide[combo{c.Rail, *c.DstRail}] {
			continue
		}
		a, b := c.Src, c.Dst
		if b < a {
			a, b = b, a
		}
		k := pairKey{a, b}
		s := pairs[k]
		if s == nil {
			s = &Suspect{Kind: "pair", Confidence: LowConfidence,
				Note: "cross-rail cells alone cannot tell the HCA from the spine path; compare with the same-rail matrix"}
			pairs[k] = s
			order = append(order, k)
		}
		if isTested(c) {
			s.Total++
		}
		if !isBad(c) {
			continue
		}
		if s.Bad == 0 {
			s.Node, s.Peer, s.Rail, s.Device = c.Src, c.Dst, c.Rail, c.SrcDevice
			s.Class, s.Verdict = c.Class, c.Verdict
			s.Reason = fmt.Sprintf("cross-rail %s rail %d → %s rail %d: %s", c.Src, c.Rail, c.Dst, *c.DstRail, c.Reason)
			if c.Error != nil {
				s.Fix = c.Error.Fix
			}
		}
		s.Bad++
	}
	for _, k := range order {
		if pairs[k].Bad > 0 {
			out = append(out, *pairs[k])
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Bad > out[b].Bad })
	return out
}

// mostCommon is the verdict most of the counted cells have; a tie goes to
// the worse one (verdictRank).
func mostCommon(by map[Verdict]int) Verdict {
	best := Verdict("")
	for v, n := range by {
		if best == "" || n > by[best] || (n == by[best] && verdictRank[v] < verdictRank[best]) {
			best = v
		}
	}
	return best
}
