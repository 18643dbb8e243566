package matrix

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/counters"
)

// A port that flaps fails the cells that met it down and passes the rest,
// so its row and column are neither mostly bad nor clean, and a short
// sweep may leave it a scatter of weak pairs. Its own counters are
// independent evidence: link_downed (and link_error_recovery) moved while
// the sweep ran. A member whose port counted its link going down, with
// failed cells touching it, is blamed for those cells, as flapping when it
// went down more than once, with the rounds its cells failed in.

// flapConfidence: the port itself counted the link going down, and its
// cells failed around it; only which peer's test met it is chance.
const flapConfidence = 0.9

// linkDowns is how many times node's port on rail counted its link going
// down or retraining during the sweep (0: none, or no counters).
func (l *localizer) linkDowns(node, rail int) uint64 {
	var n uint64
	for _, pc := range l.m.Nodes[node].Counters {
		if pc.Rail != rail {
			continue
		}
		d, err := counters.DeltaOf(pc.Device, pc.Port, pc.Counts)
		if err != nil {
			continue
		}
		n += d.Evidence().Total(counters.LinkDown)
	}
	return n
}

// flapping blames the members not blamed yet whose port counted its link
// going down and that have failed cells no wider suspect explains.
func (l *localizer) flapping(sp *railSpan, blamed []bool) {
	m := len(sp.members)
	for i := 0; i < m; i++ {
		n := sp.members[i]
		if blamed[i] || len(l.m.Nodes[n].Counters) == 0 {
			continue
		}
		downs := l.linkDowns(n, sp.rail)
		if downs == 0 {
			continue
		}
		f := finding{node: n, rail: sp.rail, sides: sideOut | sideIn, downs: downs}
		failed := 0
		for j := 0; j < m; j++ {
			if j == i || blamed[j] {
				continue
			}
			for _, c := range []struct {
				k   int
				row bool
			}{{sp.at(i, j), true}, {sp.at(j, i), false}} {
				if !l.testedAt(c.k) || l.explainedAt(c.k) {
					continue
				}
				bad := l.a.verdict(c.k) == VerdictFailed
				if bad {
					failed++
				}
				if c.row {
					f.rowTested++
					if bad {
						f.rowBad++
					}
				} else {
					f.colTested++
					if bad {
						f.colBad++
					}
				}
			}
		}
		if failed == 0 {
			continue
		}
		f.bgBad, f.bgTested = l.background(sp, blamed)
		l.accept(sp, i, &f, blamed)
	}
}

// flapWhen says in which rounds a finding's cells failed, as runs of
// consecutive rounds: "rounds 3-5, 9 and 12-13 (3 episodes)".
func (l *localizer) flapWhen(cells []int) string {
	p := l.a.peeker()
	seen := map[int]bool{}
	var rounds []int
	for _, k := range cells {
		sp, s, d := l.a.locate(k)
		if r := p.peek(s, d, sp.rail).Round; r > 0 && !seen[r] {
			seen[r] = true
			rounds = append(rounds, r)
		}
	}
	if len(rounds) == 0 {
		return ""
	}
	sort.Ints(rounds)
	var runs []string
	for i := 0; i < len(rounds); {
		j := i
		for j+1 < len(rounds) && rounds[j+1] == rounds[j]+1 {
			j++
		}
		if i == j {
			runs = append(runs, fmt.Sprint(rounds[i]))
		} else {
			runs = append(runs, fmt.Sprintf("%d-%d", rounds[i], rounds[j]))
		}
		i = j + 1
	}
	word := "round"
	if len(rounds) > 1 {
		word = "rounds"
	}
	list := strings.Join(runs, ", ")
	if k := strings.LastIndex(list, ", "); k >= 0 {
		list = list[:k] + " and " + list[k+2:]
	}
	return fmt.Sprintf("%s %s (%d episode(s))", word, list, len(runs))
}
