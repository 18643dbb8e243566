package matrix

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The golden files hold everything the matrix produces for a fixed set of
// sweeps (golden_cases_test.go): the verdict of every cell, the bad cells
// with their reasons and fixes, the suspects with their confidence and
// evidence, and every export. TestGolden fails on any byte that changes;
// `go test ./matrix -run Golden -update` rewrites the files from today's
// code, to be reviewed with git diff before they are committed.
//
// Where they come from: the files were first written while the package's
// earlier, uncompacted implementation still ran beside this one under an
// equivalence test, and each was rendered from it as well. 95 of the 124
// are byte for byte its output. In the other 29 every cell, verdict,
// reason and fix is still its output, but the suspects (and the summary,
// exclude lists, host file, NCCL settings and diff, which follow from
// them) hold what it did not find:
//   - a direction (egress or ingress), a fault from a round on, or a
//     confidence scaled by a noisy rail, which the equivalence test let
//     through by comparing those sweeps without their suspects:
//     demo/hca-ingress-bw-0.3, localize/hca-bad-only-as-initiator, the six
//     direction/ and three fromround/ cases that find one,
//     spread/low-bandwidth-on-a-rail-spread-15-scaled-down,
//     spread/hard-failure-beside-noise, random seeds 015, 021 and 027;
//   - a hard failure among a slow suspect's cells, counted and ranked
//     first, which it compared with the suspects put back in the earlier
//     order and without the count:
//     scenario/two-overlapping-faults-a-slow-node-and-a-dead-hca,
//     demo/three-faults, outputs/exclude-mix, random seeds 001, 003, 006,
//     011, 018, 022, 023, 025 and 026;
//   - counter evidence, which the earlier implementation never read, so
//     the equivalence test skipped the sweep: counters/hca-retransmissions.
var updateGolden = flag.Bool("update", false, "rewrite testdata/golden from today's matrix")

const goldenDir = "testdata/golden"

// fullCells is the largest sweep whose cell-by-cell exports (the whole
// JSON, CSV and JUnit, the baseline) the golden files hold; bigger ones
// keep their bad cells and every cell's verdict, which is what could
// change, while their ok cells would only repeat the input.
const fullCells = 30

// goldenOutput is one section of a golden file.
type goldenOutput struct {
	name  string
	full  bool // only for sweeps of at most fullCells cells
	write func(g *goldenRun, w io.Writer) error
}

// goldenRun is one case analysed, with the sweep its diff compares with.
type goldenRun struct {
	m, before *Matrix
}

var goldenOutputs = []goldenOutput{
	{name: "summary.txt", write: func(g *goldenRun, w io.Writer) error {
		_, err := io.WriteString(w, g.m.Summary())
		return err
	}},
	{name: "verdicts.txt", write: func(g *goldenRun, w io.Writer) error {
		_, err := io.WriteString(w, verdictGrid(g.m))
		return err
	}},
	{name: "summary.json", write: func(g *goldenRun, w io.Writer) error {
		// The node inventory is the input's, sorted; matrix.json has it.
		v := g.m.SummaryOnly()
		v.Nodes = []Node{}
		return v.WriteJSON(w)
	}},
	{name: "bad.csv", write: func(g *goldenRun, w io.Writer) error { return g.m.BadOnly().WriteCSV(w) }},
	{name: "exclude.txt", write: func(g *goldenRun, w io.Writer) error {
		return g.m.WriteExclude(w, ExcludeOptions{})
	}},
	{name: "exclude-lenient.txt", write: func(g *goldenRun, w io.Writer) error {
		return g.m.WriteExclude(w, ExcludeOptions{KeepPairs: true, KeepSlow: true, MinConfidence: 0.5})
	}},
	{name: "hostfile.txt", write: func(g *goldenRun, w io.Writer) error {
		return g.m.WriteHostfile(w, HostfileOptions{Slots: 2})
	}},
	{name: "nccl.env", write: func(g *goldenRun, w io.Writer) error { return g.m.WriteNCCLEnv(w, NCCLOptions{}) }},
	{name: "nccl-rail-netdev.env", write: func(g *goldenRun, w io.Writer) error {
		return g.m.WriteNCCLEnv(w, NCCLOptions{UseRailNetdev: true, EnvFile: true})
	}},
	{name: "diff.txt", write: func(g *goldenRun, w io.Writer) error {
		d := Diff(g.before, g.m)
		return d.WriteText(w)
	}},
	{name: "diff.json", full: true, write: func(g *goldenRun, w io.Writer) error {
		d := Diff(g.before, g.m)
		return d.WriteJSON(w)
	}},
	{name: "matrix.json", full: true, write: func(g *goldenRun, w io.Writer) error { return g.m.WriteJSON(w) }},
	{name: "junit.xml", full: true, write: func(g *goldenRun, w io.Writer) error { return g.m.WriteJUnit(w) }},
	{name: "cells.csv", full: true, write: func(g *goldenRun, w io.Writer) error { return g.m.WriteCSV(w) }},
	{name: "baseline.json", full: true, write: func(g *goldenRun, w io.Writer) error {
		return BaselineFrom(g.m, "golden").WriteJSON(w)
	}},
}

// verdictGrid draws each rail's verdicts, a row per initiator and a column
// per target, so a changed verdict of an ok cell shows where the exports
// of a big sweep list only the bad ones.
func verdictGrid(m *Matrix) string {
	var b strings.Builder
	b.WriteString("rows: initiators, columns: targets, in node order; . ok  F failed  S slow-latency  B low-bandwidth  ? untested  - none\n")
	width := 0
	for _, n := range m.Nodes {
		width = max(width, len(n.Name))
	}
	row := make([]byte, len(m.Nodes))
	for r := range m.Rails {
		fmt.Fprintf(&b, "rail %d\n", r)
		for _, src := range m.Nodes {
			for j, dst := range m.Nodes {
				row[j] = '-'
				if k, ok := m.CellIndex(r, src.Name, dst.Name); ok {
					row[j] = verdictMark[m.VerdictAt(k)]
				}
			}
			fmt.Fprintf(&b, "%-*s %s\n", width, src.Name, row)
		}
	}
	return b.String()
}

var verdictMark = map[Verdict]byte{VerdictOK: '.', VerdictFailed: 'F', VerdictSlowLatency: 'S',
	VerdictLowBandwidth: 'B', VerdictUntested: '?'}

// renderGolden is a case's golden file: a header line, then each output
// under a "=== name ===" line. An output that does not end in a newline
// says so in its line, so the file gives back its exact bytes.
func renderGolden(tb testing.TB, header string, g *goldenRun, all bool) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("# " + header + "\n")
	small := g.m.NumCells()+len(g.m.Cross) <= fullCells
	for _, o := range goldenOutputs {
		if o.full && !small && !all {
			continue
		}
		var out bytes.Buffer
		name := o.name
		if err := o.write(g, &out); err != nil {
			// Refusing to write is an output too (a JSON export of an
			// infinite figure): the error and what went out before it.
			name += " (error: " + err.Error() + ")"
		}
		s := out.String()
		if strings.Contains("\n"+s, "\n=== ") {
			tb.Fatalf("%s: %s has a line that reads as a section of the golden file", header, o.name)
		}
		switch {
		case s == "":
			b.WriteString("=== " + name + " (empty) ===\n")
		case !strings.HasSuffix(s, "\n"):
			b.WriteString("=== " + name + " (no final newline) ===\n" + s + "\n")
		default:
			b.WriteString("=== " + name + " ===\n" + s)
		}
	}
	return b.String()
}

// goldenSection is one output of a golden file as text, and the file line
// its first line is on.
type goldenSection struct {
	name, text string
	line       int
}

func splitGolden(file string) []goldenSection {
	var out []goldenSection
	for i, line := range strings.SplitAfter(file, "\n") {
		name, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "=== ")
		if ok && strings.HasSuffix(name, " ===") {
			out = append(out, goldenSection{name: strings.TrimSuffix(name, " ==="), line: i + 2})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].text += line
		}
	}
	return out
}

// goldenDifference names the outputs of a case that differ, and the
// first differing line of the first of them.
func goldenDifference(want, got string) string {
	ws, gs := splitGolden(want), splitGolden(got)
	var names []string
	first := ""
	for i := range max(len(ws), len(gs)) {
		var what string
		switch {
		case i >= len(ws):
			names = append(names, gs[i].name)
			what = fmt.Sprintf("output %s is not in the golden file", gs[i].name)
		case i >= len(gs):
			names = append(names, ws[i].name)
			what = fmt.Sprintf("output %s is in the golden file but no longer written", ws[i].name)
		case ws[i].name != gs[i].name:
			names = append(names, gs[i].name)
			what = fmt.Sprintf("output %s where the golden file has %s", gs[i].name, ws[i].name)
		case ws[i].text != gs[i].text:
			names = append(names, ws[i].name)
			n, w, g := firstDifferentLine(ws[i].text, gs[i].text)
			what = fmt.Sprintf("output %s, line %d (line %d of the file):\n  want %q\n   got %q", ws[i].name, n, ws[i].line+n-1, w, g)
		}
		if first == "" {
			first = what
		}
	}
	if first == "" {
		n, w, g := firstDifferentLine(want, got)
		return fmt.Sprintf("line %d:\n  want %q\n   got %q", n, w, g)
	}
	return fmt.Sprintf("%d output(s) differ (%s); the first: %s", len(names), strings.Join(names, ", "), first)
}

// firstDifferentLine is the number (from 1) and text of the first line
// where want and got differ.
func firstDifferentLine(want, got string) (int, string, string) {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b || i >= len(w) || i >= len(g) {
			return i + 1, a, b
		}
	}
	return len(w), "", ""
}

func TestGolden(t *testing.T) {
	cases := goldenCases()
	written := map[string]bool{}
	for _, c := range cases {
		path := filepath.Join(goldenDir, filepath.FromSlash(c.path)+".txt")
		if written[path] {
			t.Fatalf("two golden cases write %s", path)
		}
		written[path] = true
		t.Run(c.path, func(t *testing.T) {
			g := c.run()
			got := renderGolden(t, c.header(g.m), g, false)
			if compact := renderGolden(t, c.header(g.m), c.compact(g.before), false); compact != got {
				t.Fatalf("the compact analysis renders otherwise than the materialised one: %s", goldenDifference(got, compact))
			}
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./matrix -run Golden -update writes it)", err)
			}
			if string(want) != got {
				t.Errorf("%s differs from today's matrix: %s\n(if the change is meant, go test ./matrix -run Golden -update and review git diff %s)",
					path, goldenDifference(string(want), got), goldenDir)
			}
		})
	}
	// A file no case writes any more would pass unnoticed forever.
	var stale []string
	err := filepath.WalkDir(goldenDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !written[path] {
			stale = append(stale, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(stale)
	for _, path := range stale {
		if !*updateGolden {
			t.Errorf("%s belongs to no golden case (go test ./matrix -run Golden -update removes it)", path)
		} else if err := os.Remove(path); err != nil {
			t.Error(err)
		}
	}
}
