package links

import (
	"fmt"
	"io"
)

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

// Write prints the table: recall is the runs whose first suspects named
// every injected part, precision the named link suspects that were right.
func Write(w io.Writer, cfg Config, rows []Row) {
	what := "every ordered pair of the faulted planes"
	if cfg.Pattern == PatternFabric {
		what = "a fabric sweep's cells (pairs in each leaf, steered link tests)"
	}
	fmt.Fprintf(w, "link localization on %s, preset %s, %d runs a fault type, seed %d, measuring %s\n", cfg.Tree, cfg.Preset, cfg.Runs, cfg.Seed, what)
	if len(rows) > 0 && rows[0].Planes < rows[0].Rails {
		fmt.Fprintf(w, "faults on rails 0-%d of %d: the analysis of a later rail would pass the heap limit\n", rows[0].Planes-1, rows[0].Rails)
	}
	fmt.Fprintf(w, "%-18s %5s %9s %9s %7s %9s %8s\n", "fault", "runs", "recall", "precision", "named", "no-links", "s/run")
	var named, wrong, faultRuns, hits int
	for _, r := range rows {
		rec := pct(r.Hit, r.Runs)
		if r.Clean {
			rec = "-"
		} else {
			faultRuns += r.Runs
			hits += r.Hit
		}
		fmt.Fprintf(w, "%-18s %5d %9s %9s %7d %9s %8.1f\n", r.Name, r.Runs, rec, pct(r.Named-r.WrongNamed, r.Named), r.Named, pct(r.Healthy, r.Runs),
			r.Wall.Seconds()/float64(max(r.Runs, 1)))
		named += r.Named
		wrong += r.WrongNamed
	}
	fmt.Fprintf(w, "%-18s %5d %9s %9s %7d\n", "all faults", faultRuns, pct(hits, faultRuns), pct(named-wrong, named), named)
}
