package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func plane(leaves, perLeaf, spines int) Plane {
	p := Plane{Spines: spines}
	for l := range leaves {
		var nodes []string
		for i := range perLeaf {
			nodes = append(nodes, fmt.Sprintf("n%02d-%02d", l, i))
		}
		p.Leaves = append(p.Leaves, nodes)
	}
	return p
}

// Every leaf-spine link is crossed both ways by at least two tests with
// different node pairs, in 2·L·S tests; no two links carry the same tests
// (so one bad link is named), and the rounds share no node and no link.
func TestLinkSweepCoversEveryLink(t *testing.T) {
	for _, tc := range []struct{ leaves, perLeaf, spines int }{
		{2, 1, 1}, {2, 4, 2}, {3, 2, 2}, {4, 32, 16}, {32, 16, 8}, {5, 1, 3},
	} {
		name := fmt.Sprintf("%dx%d/%d spines", tc.leaves, tc.perLeaf, tc.spines)
		p := plane(tc.leaves, tc.perLeaf, tc.spines)
		tests, err := LinkSweep(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := 2 * tc.leaves * tc.spines; len(tests) != want {
			t.Fatalf("%s: %d tests, want 2·L·S = %d", name, len(tests), want)
		}
		leafOf := func(n string) string { return n[:3] }
		through := map[string][]string{} // link → the tests crossing it
		for _, x := range tests {
			pair := fmt.Sprintf("%s>%s@%d", x.From, x.To, x.Spine)
			up := fmt.Sprintf("%s^s%d", leafOf(x.From), x.Spine)
			down := fmt.Sprintf("s%dv%s", x.Spine, leafOf(x.To))
			through[up] = append(through[up], pair)
			through[down] = append(through[down], pair)
		}
		if want := 2 * tc.leaves * tc.spines; len(through) != want {
			t.Fatalf("%s: %d links crossed, want all %d", name, len(through), want)
		}
		seen := map[string]string{}
		for l, pairs := range through {
			distinct := slices.Compact(slices.Sorted(slices.Values(pairs)))
			if len(pairs) < 2 || tc.perLeaf > 1 && len(distinct) < 2 {
				t.Fatalf("%s: link %s crossed by %v: want two tests with different partners", name, l, pairs)
			}
			key := strings.Join(distinct, ",")
			if other, dup := seen[key]; dup && tc.leaves > 2 {
				t.Fatalf("%s: links %s and %s carry the same tests %s: a bad one could not be told apart", name, l, other, key)
			}
			seen[key] = l
		}
		rounds := LinkRounds(p, tests)
		n := 0
		for i, r := range rounds {
			nodes, links := map[string]bool{}, map[string]bool{}
			for _, x := range r {
				up := fmt.Sprintf("%s^s%d", leafOf(x.From), x.Spine)
				down := fmt.Sprintf("s%dv%s", x.Spine, leafOf(x.To))
				if nodes[x.From] || nodes[x.To] || links[up] || links[down] {
					t.Fatalf("%s: round %d uses a node or a link twice: %+v", name, i, r)
				}
				nodes[x.From], nodes[x.To], links[up], links[down] = true, true, true, true
				n++
			}
		}
		if n != len(tests) {
			t.Fatalf("%s: rounds hold %d tests of %d", name, n, len(tests))
		}
		t.Logf("%s: %d tests in %d rounds", name, len(tests), len(rounds))
	}
}

func TestLinkSweepRefuses(t *testing.T) {
	for _, tc := range []struct {
		p    Plane
		want string
	}{
		{plane(3, 2, 0), "0 spines"},
		{plane(1, 4, 2), "fewer than two leaves"},
		{Plane{Leaves: [][]string{{"a"}, {}}, Spines: 2}, "leaf 1 has no node"},
		{Plane{Leaves: [][]string{{"a"}, {"a"}}, Spines: 1}, "node a is under leaves 0 and 1"},
	} {
		_, err := LinkSweep(tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.p, err, tc.want)
		}
	}
}
