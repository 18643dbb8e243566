package cabling

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Summary is one line: what was judged and how many of each verdict.
func (r *Report) Summary() string {
	var parts []string
	for _, v := range Verdicts {
		if n := r.Counts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	what := "cabling against the plan"
	if !r.Planned {
		what = "cabling without a plan"
	}
	return fmt.Sprintf("%s: %d ports, %d findings (%s)", what, len(r.Ports), len(r.Ports)-r.Counts[OK], strings.Join(parts, ", "))
}

// WriteTable writes the findings for people: the summary, one row a
// finding, how port names were read and, without a plan, what one adds.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, r.Summary())
	if fs := r.Findings(); len(fs) > 0 {
		fmt.Fprintln(tw, "\nEND\tVERDICT\tEXPECTED\tFOUND\tEVIDENCE\tACTION")
		for _, f := range fs {
			found := f.Found
			if f.With != "" {
				found += " (with " + f.With + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.End, f.Verdict, dash(f.Expected), dash(found), dash(f.Evidence), dash(f.Action))
		}
	}
	for _, pr := range r.PortRules {
		if pr.Learned {
			fmt.Fprintf(tw, "\nports shaped %s are read by %s (learned: %d of %d agree with the plan)", pr.Shape, pr.Rule, pr.Agree, pr.Samples)
		}
	}
	if len(r.PlanWouldAdd) > 0 {
		fmt.Fprintln(tw, "\n\nwith a plan, this analysis would also:")
		for _, s := range r.PlanWouldAdd {
			fmt.Fprintln(tw, "  - "+s)
		}
	}
	fmt.Fprintln(tw)
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteJSON writes the whole report, ok ports included.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// CSVHeader is the technician's list's columns.
var CSVHeader = []string{"end", "node", "hca", "rail", "expected", "found", "verdict", "with", "evidence", "action", "detail"}

// WriteCSV writes the technician's list: one row per finding, ok ports
// left out, worst first.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, f := range r.Findings() {
		rail := ""
		if f.Rail >= 0 {
			rail = strconv.Itoa(f.Rail)
		}
		if err := cw.Write([]string{f.End, f.Node, f.HCA, rail, f.Expected, f.Found, string(f.Verdict), f.With, f.Evidence, f.Action, f.Detail}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
