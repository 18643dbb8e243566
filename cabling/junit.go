package cabling

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/junit"
)

// WriteJUnit writes a test case per node (its HCA ports) and per switch
// (the cables it is the near end of, and what it reports unplanned): a
// CI run lists the nodes to hold back. A case fails on any finding but
// no-evidence, and is skipped, never passed, with a port of no evidence.
func (r *Report) WriteJUnit(w io.Writer) error {
	type unit struct {
		bad, blind []Finding
	}
	units := map[string]*unit{}
	for _, f := range r.Ports {
		name := f.Node
		if name == "" {
			name, _, _ = strings.Cut(f.End, ":")
		}
		u := units[name]
		if u == nil {
			u = &unit{}
			units[name] = u
		}
		switch f.Verdict {
		case OK:
		case NoEvidence:
			u.blind = append(u.blind, f)
		default:
			u.bad = append(u.bad, f)
		}
	}
	names := make([]string, 0, len(units))
	for n := range units {
		names = append(names, n)
	}
	sort.Strings(names)
	s := junit.Suite{Name: "cabling"}
	for _, n := range names {
		u := units[n]
		tc := junit.Case{Name: n, Classname: "cabling"}
		switch {
		case len(u.bad) > 0:
			tc.Failure = &junit.Message{Message: fmt.Sprintf("%d cabling findings", len(u.bad)), Text: lines(u.bad)}
			s.Failures++
		case len(u.blind) > 0:
			tc.Skipped = &junit.Message{Message: fmt.Sprintf("%d ports without evidence: nothing heard and no traced path", len(u.blind)), Text: lines(u.blind)}
			s.Skipped++
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junit.Suites{Suites: []junit.Suite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func lines(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s: %s, expected %s, found %s. %s\n", f.End, f.Verdict, dash(f.Expected), dash(f.Found), f.Action)
	}
	return b.String()
}
