package matrix

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Our own reading of the JUnit schema, independent of the writer's types,
// so a field renamed on one side fails here.
type parsedSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// junitMix is a 4 x 2 fabric with a failure whose text needs escaping in
// XML, a slow HCA and an untested cell.
func junitMix() *fixture {
	f := newFixture(4, 2)
	f.touching("node-02", 1, fail(probe.ClassPortDown, `port 1 of mlx5_1 is DOWN <"phys 3">`, "reseat node-02's cable & retry"))
	f.touching("node-04", 0, slow(6))
	f.drop(func(c *Cell) bool { return c.Src == "node-01" && c.Dst == "node-03" && c.Rail == 0 })
	return f
}

func TestWriteJUnit(t *testing.T) {
	m := junitMix().build()

	var buf bytes.Buffer
	if err := m.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "<?xml") {
		t.Fatalf("no XML header: %.60s", buf.String())
	}
	var got parsedSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	// rail 0: 6 slow (node-04 row+col) + 1 untested; rail 1: 6 failed.
	if got.Tests != 24 || got.Failures != 13 || len(got.Suites) != 2 {
		t.Fatalf("tests=%d failures=%d suites=%d", got.Tests, got.Failures, len(got.Suites))
	}
	wantFailures := []int{7, 6}
	types := map[string]int{}
	for r, s := range got.Suites {
		if s.Name != railKey(r) || s.Tests != 12 || len(s.Cases) != 12 || s.Failures != wantFailures[r] {
			t.Fatalf("suite %d: name=%s tests=%d cases=%d failures=%d", r, s.Name, s.Tests, len(s.Cases), s.Failures)
		}
		failures := 0
		for _, c := range s.Cases {
			if c.Classname != "rdmamesh."+railKey(r) || !strings.Contains(c.Name, " -> ") {
				t.Fatalf("case %+v", c)
			}
			if c.Failure == nil {
				continue
			}
			failures++
			types[c.Failure.Type]++
			if c.Failure.Type == string(VerdictFailed) {
				for _, part := range []string{"class: port-down", `cause: port 1 of mlx5_1 is DOWN <"phys 3">`, "fix: reseat node-02's cable & retry"} {
					if !strings.Contains(c.Failure.Text, part) {
						t.Errorf("failure text lacks %q:\n%s", part, c.Failure.Text)
					}
				}
			}
			if !strings.HasPrefix(c.Failure.Message, c.Failure.Type+": ") || !strings.Contains(c.Failure.Message, "; fix: ") {
				t.Errorf("case %s: failure message %q lacks cause or fix", c.Name, c.Failure.Message)
			}
		}
		if failures != s.Failures {
			t.Fatalf("suite %s says %d failures, has %d", s.Name, s.Failures, failures)
		}
	}
	if types[string(VerdictFailed)] != 6 || types[string(VerdictSlowLatency)] != 6 || types[string(VerdictUntested)] != 1 {
		t.Fatalf("failure types %v", types)
	}
	if c := got.Suites[0].Cases[0]; c.Name != "node-01 -> node-02" || c.Failure != nil {
		t.Fatalf("first case %+v", c)
	}
}

func TestWriteJSONRoundTrip(t *testing.T) {
	f := newFixture(5, 2)
	f.touching("node-03", 1, fail(probe.ClassRetryExceeded, "retry exceeded", "check the cable"))
	f.touching("node-05", 0, slow(4))
	f.nodes[0].Labels = map[string]string{"rack": "r1"}
	f.nodes[1].Labels = map[string]string{}
	m := f.build()

	var a, b bytes.Buffer
	if err := m.WriteJSON(&a); err != nil {
		t.Fatal(err)
	}
	var back Matrix
	if err := json.Unmarshal(a.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, &back) {
		t.Fatalf("round trip differs:\n%+v\n%+v", m.Suspects, back.Suspects)
	}
	if err := back.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatal("re-encoding the decoded matrix gives other bytes")
	}
	s := a.String()
	// Stable field order: the struct's, indented, "->" not escaped.
	order := []string{`"schema_version"`, `"nodes"`, `"rails"`, `"thresholds"`, `"cells"`, `"counts"`, `"node_rollups"`, `"rail_rollups"`, `"suspects"`, `"healthy"`}
	last := -1
	for _, k := range order {
		i := strings.Index(s, "\n  "+k+":")
		if i < last {
			t.Fatalf("field %s missing or out of order", k)
		}
		last = i
	}
	if !strings.Contains(s, "node-03 -> node-01") || strings.Contains(s, `\u003e`) {
		t.Fatal("reasons not written readably")
	}
}

// An empty sweep still writes lists, not nulls, so UIs need no special case.
func TestWriteJSONEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := Build(nil, nil, DefaultThresholds()).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"cells": []`, `"suspects": []`, `"nodes": []`, `"healthy": false`} {
		if !strings.Contains(buf.String(), k) {
			t.Errorf("missing %s in\n%s", k, buf.String())
		}
	}
}

// WriteJSON streams the cells; its bytes must be exactly what encoding the
// whole Matrix at once gives, for every shape the cells and cross-rail
// cells can take (nil, empty, some).
func TestWriteJSONStreamsTheWholeValue(t *testing.T) {
	whole := func(m *Matrix) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	full := jsonShapes()
	noCross := *full
	noCross.Cross = nil
	empty := Build(nil, nil, DefaultThresholds())
	nilCells := *empty
	nilCells.Cells = nil
	for name, m := range map[string]*Matrix{"cells and cross": full, "no cross": &noCross, "empty": empty, "nil cells": &nilCells} {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			if err := m.WriteJSON(&got); err != nil {
				t.Fatal(err)
			}
			if want := whole(m); got.String() != want {
				t.Fatalf("streamed JSON differs:\n got %q\nwant %q", got.String()[:min(400, got.Len())], want[:min(400, len(want))])
			}
		})
	}
	if len(full.Cross) != 1 || len(empty.Cells) != 0 || empty.Cells == nil {
		t.Fatalf("cross %d, empty cells %v: the fixture lost its shapes", len(full.Cross), empty.Cells)
	}
}

// ReadJSON decodes the cells one at a time; it must give what
// json.Unmarshal gives, and refuse what it refuses.
func TestReadJSONMatchesUnmarshal(t *testing.T) {
	var doc bytes.Buffer
	if err := jsonShapes().WriteJSON(&doc); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{
		"written":          doc.String(),
		"keys reordered":   `{"healthy": true, "cells": [{"src": "a", "dst": "b", "rail": 0, "verdict": "ok"}], "rails": 1, "future_field": {"x": [1, 2]}}`,
		"null cells":       `{"cells": null, "rails": 2}`,
		"empty cells":      `{"cells": [], "cross": []}`,
		"capitalised keys": `{"Cells": [{"src": "a"}], "Rails": 3}`,
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			var want, got Matrix
			if err := json.Unmarshal([]byte(in), &want); err != nil {
				t.Fatal(err)
			}
			if err := got.ReadJSON(strings.NewReader(in)); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("ReadJSON differs from json.Unmarshal:\n%+v\n%+v", want, got)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `{"cells": {}}`, `{"cells": [1]}`, `{"cells": [`, `{"rails": "x"}`, `{"rails": 1`} {
		var m Matrix
		if err := m.ReadJSON(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// jsonShapes is a small matrix with every shape the JSON code treats on its
// own: a failure whose text has HTML characters, a label, a cross-rail cell.
func jsonShapes() *Matrix { return jsonShapesFixture().build() }

func jsonShapesFixture() *fixture {
	f := newFixture(4, 2)
	f.touching("node-02", 1, fail(probe.ClassRetryExceeded, "retry exceeded -> lost", "check <the> cable & port"))
	f.nodes[0].Labels = map[string]string{"rack": "r1"}
	dstRail := 0
	f.cells = append(f.cells, Cell{Src: "node-01", Dst: "node-03", Rail: 1, DstRail: &dstRail, Class: probe.ClassOK,
		Latency: &probe.Latency{Samples: 10, P50Ns: 1500}})
	return f
}
