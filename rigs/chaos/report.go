package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/testkit/procstat"
)

// figure is one line of the final table; a figure with a limit it misses
// is a violation.
type figure struct {
	scenario, name, value, limit string
	ok                           bool
}

type report struct {
	figs []figure
	bad  []string // violations, in the order found
}

// add records a figure checked against limit.
func (r *report) add(scenario, name, value, limit string, ok bool) {
	r.figs = append(r.figs, figure{scenario, name, value, limit, ok})
	if !ok {
		r.bad = append(r.bad, fmt.Sprintf("%s: %s = %s, want %s", scenario, name, value, limit))
	}
}

// note records a figure that has no limit.
func (r *report) note(scenario, name, value string) {
	r.figs = append(r.figs, figure{scenario, name, value, "", true})
}

// fail records a violation that is not a figure, such as a scenario that
// could not finish.
func (r *report) fail(scenario string, err error) {
	r.figs = append(r.figs, figure{scenario, "error", err.Error(), "none", false})
	r.bad = append(r.bad, scenario+": "+err.Error())
}

func (r *report) write(w io.Writer) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tfigure\tvalue\twant\t")
	last := ""
	for _, f := range r.figs {
		s := f.scenario
		if s == last {
			s = ""
		}
		last = f.scenario
		mark := ""
		if f.limit != "" {
			mark = "ok"
			if !f.ok {
				mark = "VIOLATION"
			}
		}
		// Long values (errors) would widen every row; the violation list
		// under the table has them in full.
		v := f.value
		if i := strings.IndexByte(v, '\n'); i >= 0 {
			v = v[:i] + " ..."
		}
		if len(v) > 64 {
			v = v[:61] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s, f.name, v, f.limit, mark)
	}
	tw.Flush()
}

// durs summarises durations for the table.
type durs []time.Duration

func (d durs) sorted() durs {
	s := append(durs(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

func (d durs) median() time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := d.sorted()
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (d durs) max() time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d.sorted()[len(d)-1]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

func mb(b uint64) string { return procstat.MB(b) }
