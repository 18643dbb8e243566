package matrix

import (
	"fmt"
	"math/rand"
	"strings"
)

// sweep is one input of the analysis.
type sweep struct {
	nodes []Node
	src   Source
	cells []Cell
	th    Thresholds
}

func fixtureSweep(f *fixture, th Thresholds) sweep {
	return sweep{nodes: f.nodes, cells: f.cells, th: th}
}

// goldenCase is a sweep whose outputs testdata/golden/<path>.txt holds.
type goldenCase struct {
	path  string
	about string // what the header adds to the path
	input func() sweep
	// before is the sweep its diff starts from; nil: the same fabric
	// healthy, as newFixture makes it.
	before func() sweep
}

func (c *goldenCase) run() *goldenRun {
	in := c.input()
	g := &goldenRun{m: BuildFrom(in.nodes, in.src, in.cells, in.th)}
	if c.before != nil {
		b := c.before()
		g.before = BuildFrom(b.nodes, b.src, b.cells, b.th)
	} else {
		g.before = healthyLike(g.m)
	}
	return g
}

// compact is the case analysed without materialising its cells, beside
// the same before: the form the coordinator keeps, which must render the
// same file.
func (c *goldenCase) compact(before *Matrix) *goldenRun {
	in := c.input()
	return &goldenRun{m: Analyse(in.nodes, in.src, in.cells, in.th), before: before}
}

// healthyLike is m's fabric as newFixture builds it, every cell ok.
func healthyLike(m *Matrix) *Matrix { return newFixture(len(m.Nodes), m.Rails).build() }

func (c *goldenCase) header(m *Matrix) string {
	name := c.path
	if c.about != "" {
		name += " (" + c.about + ")"
	}
	return fmt.Sprintf("%s: %d nodes, %d rails, %d cells, %d cross-rail; go test ./matrix -run Golden -update rewrites this file",
		name, len(m.Nodes), m.Rails, m.NumCells(), len(m.Cross))
}

// goldenSeeds are the random sweeps (randomSweep) the golden files hold.
const goldenSeeds = 25

// goldenCases are the fault tables of this package's tests, the demo's
// faults (golden_demo_test.go) and seeded random sweeps. The tests check
// what each case is about; the golden files hold all the rest.
func goldenCases() []goldenCase {
	var cs []goldenCase
	add := func(path string, input func() sweep) {
		cs = append(cs, goldenCase{path: path, input: input})
	}
	for _, c := range scenarioCases() {
		add("scenario/"+slug(c.name), func() sweep {
			f := scenarioFabric()
			c.break_(f)
			return fixtureSweep(f, c.thresholds())
		})
	}
	for _, c := range demoCases() {
		cs = append(cs, goldenCase{path: "demo/" + c.name, about: "--fault " + c.spec,
			input: func() sweep {
				f := demoFabric()
				c.break_(f)
				return fixtureSweep(f, DefaultThresholds())
			},
			before: func() sweep { return fixtureSweep(demoFabric(), DefaultThresholds()) }})
	}
	for _, c := range localizeCases() {
		add("localize/"+slug(c.name), func() sweep {
			f := newFixture(c.nodes, c.rails)
			c.break_(f)
			return fixtureSweep(f, DefaultThresholds())
		})
	}
	for _, c := range directionCases() {
		add("direction/"+slug(c.name), func() sweep {
			f := newFixture(16, 4)
			c.break_(f)
			return fixtureSweep(f, DefaultThresholds())
		})
	}
	for _, c := range fromRoundCases() {
		add("fromround/"+slug(c.name), func() sweep {
			f := newFixture(16, 4)
			f.scheduleRounds()
			c.break_(f)
			return fixtureSweep(f, DefaultThresholds())
		})
	}
	for _, c := range spreadCases() {
		add("spread/"+slug(c.name), func() sweep {
			f := newFixture(16, 2)
			c.break_(f)
			return fixtureSweep(f, loose())
		})
	}
	add("spread/hard-failure-beside-noise", func() sweep {
		f := newFixture(16, 2)
		hardFailureBesideNoise(f)
		return fixtureSweep(f, loose())
	})
	for _, c := range retestCases() {
		add("retest/"+slug(c.name), func() sweep { return fixtureSweep(c.fixture(), DefaultThresholds()) })
	}
	add("retest/cross-rail", func() sweep { return fixtureSweep(crossRailFabric(), DefaultThresholds()) })
	cs = append(cs, ruleGoldenCases()...)
	cs = append(cs, otherGoldenCases()...)
	for _, seed := range goldenRandomSeeds() {
		add(fmt.Sprintf("random/seed-%03d", seed), func() sweep { return randomGoldenSweep(seed) })
	}
	return cs
}

// goldenRandomSeeds are the first goldenSeeds seeds whose sweep has at
// most 15 nodes. randomSweep makes one sweep in ten 30 to 49 nodes wide;
// noisy, such a sweep has a thousand pair suspects, a megabyte of golden
// text that tells no more than the small ones.
func goldenRandomSeeds() []int64 {
	var seeds []int64
	for seed := int64(1); len(seeds) < goldenSeeds; seed++ {
		if nodes, _, _ := randomSweep(rand.New(rand.NewSource(seed))); len(nodes) <= 15 {
			seeds = append(seeds, seed)
		}
	}
	return seeds
}

func ruleGoldenCases() []goldenCase {
	var cs []goldenCase
	add := func(path string, input func() sweep) {
		cs = append(cs, goldenCase{path: path, input: input})
	}
	for _, c := range lineRateCases() {
		add("rules/line-rate-"+slug(c.name), func() sweep {
			f := newFixture(8, 1)
			c.break_(f)
			return fixtureSweep(f, c.th)
		})
	}
	for _, c := range robustZCases() {
		add("rules/robust-z-"+slug(c.name), func() sweep {
			f := newFixture(8, 1)
			c.break_(f)
			return fixtureSweep(f, c.th)
		})
	}
	add("rules/baseline", func() sweep { return fixtureSweep(baselineSweep()) })
	add("rules/absolute-limits", func() sweep {
		th := DefaultThresholds()
		th.MaxP99Ns, th.MinGbps = 1550, 391
		return fixtureSweep(newFixture(8, 1), th)
	})
	return cs
}

func otherGoldenCases() []goldenCase {
	var cs []goldenCase
	add := func(path string, input func() sweep) {
		cs = append(cs, goldenCase{path: path, input: input})
	}
	fixed := func(path string, f func() *fixture) {
		add(path, func() sweep { return fixtureSweep(f(), DefaultThresholds()) })
	}
	fixed("groups/group-of-two-down", groupOfTwoDown)
	fixed("groups/two-groups-cut", twoGroupsCut)
	fixed("groups/two-groups-down-of-three", twoGroupsDownOfThree)
	for _, label := range []string{"", "rack", "-"} {
		name := map[string]string{"": "automatic", "rack": "rack", "-": "off"}[label]
		add("groups/rack-across-leaves-label-"+name, func() sweep {
			th := DefaultThresholds()
			th.GroupLabel = label
			return fixtureSweep(rackDownAcrossLeaves(), th)
		})
	}
	fixed("outputs/exclude-mix", excludeMix)
	fixed("outputs/junit-mix", junitMix)
	fixed("outputs/json-shapes", jsonShapesFixture)
	fixed("outputs/nccl-conflicting-names", conflictingNames)
	for _, c := range ncclCases() {
		add("outputs/nccl-"+slug(c.name), func() sweep {
			f := newFixture(6, 2)
			c.setup(f)
			return fixtureSweep(f, DefaultThresholds())
		})
	}
	add("counters/hca-retransmissions", func() sweep {
		nodes, cells := countersSweep()
		return sweep{nodes: nodes, cells: cells, th: DefaultThresholds()}
	})
	return cs
}

// randomGoldenSweep is seed's random sweep, handed in partly through a
// Source on every other seed, as the coordinator hands its grid.
func randomGoldenSweep(seed int64) sweep {
	rng := rand.New(rand.NewSource(seed))
	nodes, cells, th := randomSweep(rng)
	s := sweep{nodes: nodes, cells: cells, th: th}
	if rng.Intn(2) == 0 {
		s.src, s.cells = splitSource(rng, nodes, cells)
	}
	return s
}

// slug makes a case's name a file name: "hca down, 16 nodes" is
// "hca-down-16-nodes".
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}
