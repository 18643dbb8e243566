package judge

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmamesh/rdmamesh/matrix"
)

// Totals are the acceptance figures over a table's rows: precision (runs
// that excluded no healthy node), and recall for hard faults and for
// performance faults of at least 3x.
type Totals struct {
	Runs, Clean                     int // runs, and runs that excluded no healthy node
	HardRuns, HardFound             int
	PerfRuns, PerfFound             int // factor >= 3
	WeakPerfRuns, WeakPerfFound     int // factor < 3, reported only
	CleanRuns, CleanPass, CleanWarn int // clean fabric: runs, exit 0
}

// Sum totals rows.
func Sum(rows []Row) Totals {
	var t Totals
	for _, r := range rows {
		t.Runs += r.Runs
		t.Clean += r.Runs - r.Wrong
		switch {
		case r.Fault == "":
			t.CleanRuns += r.Runs
			t.CleanPass += r.Exits[matrix.OutcomePass]
		case r.Hard:
			t.HardRuns += r.Runs
			t.HardFound += r.Found
		case r.Factor >= 3:
			t.PerfRuns += r.Runs
			t.PerfFound += r.Found
		default:
			t.WeakPerfRuns += r.Runs
			t.WeakPerfFound += r.Found
		}
	}
	return t
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

// Write prints rows as a Markdown table under a heading for cfg, and the
// totals.
func Write(w io.Writer, cfg Config, rows []Row) {
	fmt.Fprintf(w, "\n### %s, %d nodes, %d runs a case, %d confirmation passes\n\n", cfg.Preset, cfg.Nodes, cfg.Runs, cfg.Retests)
	fmt.Fprintln(w, "| case | found (excluded) | first suspect | a healthy node excluded | outcomes |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range rows {
		var exits []string
		for _, o := range []matrix.Outcome{matrix.OutcomePass, matrix.OutcomeFault, matrix.OutcomePerformance, matrix.OutcomeUntested} {
			if n := r.Exits[o]; n > 0 {
				exits = append(exits, fmt.Sprintf("%s %d", o, n))
			}
		}
		found, first := pct(r.Found, r.Runs), pct(r.First, r.Runs)
		if r.Fault == "" {
			found, first = "-", "-"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.Name, found, first, pct(r.Wrong, r.Runs), strings.Join(exits, ", "))
	}
	t := Sum(rows)
	fmt.Fprintf(w, "\nprecision (runs with no healthy node excluded) %s of %d; recall: hard faults %s of %d, performance >= 3x %s of %d, under 3x %s of %d; clean fabric passed %s of %d\n",
		pct(t.Clean, t.Runs), t.Runs, pct(t.HardFound, t.HardRuns), t.HardRuns, pct(t.PerfFound, t.PerfRuns), t.PerfRuns,
		pct(t.WeakPerfFound, t.WeakPerfRuns), t.WeakPerfRuns, pct(t.CleanPass, t.CleanRuns), t.CleanRuns)
}
