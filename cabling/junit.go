package cabling

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

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
	s := junitSuite{Name: "cabling"}
	for _, n := range names {
		u := units[n]
		tc := junitCase{Name: n, Classname: "cabling"}
		switch {
		case len(u.bad) > 0:
			tc.Failure = &junitMessage{Message: fmt.Sprintf("%d cabling findings", len(u.bad)), Text: lines(u.bad)}
			s.Failures++
		case len(u.blind) > 0:
			tc.Skipped = &junitMessage{Message: fmt.Sprintf("%d ports without evidence: nothing heard and no traced path", len(u.blind)), Text: lines(u.blind)}
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
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
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
