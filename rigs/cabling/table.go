package cabling

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// Write prints the tally and the analysis time per run.
func Write(w io.Writer, cfg Config, r *Result) {
	fmt.Fprintf(w, "cabling conformance on %s (ports named %s), seed %d: %d ports judged a run\n", cfg.Tree, portsStyle(cfg.Ports), cfg.Seed, r.Ports)
	fmt.Fprintf(w, "generating the tree and its observation: %.1f s (once)\n", r.Generate.Seconds())
	fmt.Fprintf(w, "faulted runs %d (%d faults, %d kinds each: %v)\n", r.Runs, r.Faults, len(Kinds), Kinds)
	fmt.Fprintf(w, "  expected findings %d: right verdict %d, wrong verdict %d, missed %d\n", r.Expected, r.Right, r.Wrong, r.Missed)
	fmt.Fprintf(w, "  false findings %d (in %d clean runs: %d)\n", r.False, r.CleanRuns, r.CleanFalse)
	if len(r.Analysis) > 0 {
		d := slices.Clone(r.Analysis)
		slices.Sort(d)
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		fmt.Fprintf(w, "  analysis per run: mean %.2f s, median %.2f s, max %.2f s\n",
			(sum / time.Duration(len(d))).Seconds(), d[len(d)/2].Seconds(), d[len(d)-1].Seconds())
	}
}

func portsStyle(s string) string {
	if s == "" {
		return "swp"
	}
	return s
}
