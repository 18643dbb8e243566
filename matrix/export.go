package matrix

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/junit"
)

// WriteJSON writes the whole matrix, indented. Field order is the struct's
// and map keys are sorted by encoding/json, so equal matrices give equal
// bytes and diffs between sweeps stay readable.
//
// It streams: the cells go out one at a time, byte for byte what encoding
// the whole Matrix at once gives. json.Encoder builds a value's complete
// encoding, and then its indented copy, before writing; at 1,024 x 8 that
// is a 4.6 GB document and took over 20 GB.
func (m *Matrix) WriteJSON(w io.Writer) error {
	head := *m
	head.Cells, head.Cross, head.a = nil, nil, nil
	var hb bytes.Buffer
	if err := newJSONEncoder(&hb, "").Encode(&head); err != nil {
		return err
	}
	// Depth-1 keys are the only ones after a newline and two spaces; with
	// Cells nil the key is followed by null, and Cross (omitempty) is gone.
	before, after, ok := bytes.Cut(hb.Bytes(), []byte("\n  \"cells\": null"))
	if !ok {
		return fmt.Errorf("matrix JSON: no cells key in %.80q", hb.String())
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	if _, err := bw.Write(before); err != nil {
		return err
	}
	if _, err := bw.WriteString("\n  \"cells\": "); err != nil {
		return err
	}
	var err error
	if m.a != nil {
		err = writeCells(bw, m)
	} else {
		err = writeResults(bw, m.Cells)
	}
	if err != nil {
		return err
	}
	if len(m.Cross) > 0 {
		if _, err := bw.WriteString(",\n  \"cross\": "); err != nil {
			return err
		}
		if err := writeResults(bw, m.Cross); err != nil {
			return err
		}
	}
	if _, err := bw.Write(after); err != nil {
		return err
	}
	return bw.Flush()
}

func newJSONEncoder(w io.Writer, prefix string) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false) // reasons contain "->"; \u003e helps nobody
	return enc
}

// jsonList writes the value of a depth-1 key that is a list, one element
// at a time, as encoding/json indents the whole list. A write error stops
// it at the element that met it: the rest of a 4 GB document would go
// nowhere.
type jsonList struct {
	bw  *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	n   int
}

func newJSONList(bw *bufio.Writer) *jsonList {
	l := &jsonList{bw: bw}
	l.enc = newJSONEncoder(&l.buf, "    ")
	return l
}

func (l *jsonList) add(r *Result) error {
	l.buf.Reset()
	if err := l.enc.Encode(r); err != nil {
		return fmt.Errorf("cell %s -> %s rail %d: %w", r.Src, r.Dst, r.Rail, err)
	}
	sep := ",\n    "
	if l.n == 0 {
		sep = "[\n    "
	}
	l.n++
	if _, err := l.bw.WriteString(sep); err != nil {
		return err
	}
	_, err := l.bw.Write(bytes.TrimSuffix(l.buf.Bytes(), []byte("\n")))
	return err
}

func (l *jsonList) end() error {
	end := "\n  ]"
	if l.n == 0 {
		end = "[]"
	}
	_, err := l.bw.WriteString(end)
	return err
}

// writeCells writes a compact matrix's cells as writeResults writes them
// when materialised.
func writeCells(bw *bufio.Writer, m *Matrix) error {
	l := newJSONList(bw)
	if err := m.EachCell(func(_ int, r *Result) error { return l.add(r) }); err != nil {
		return err
	}
	return l.end()
}

// writeResults writes rs, null when nil.
func writeResults(bw *bufio.Writer, rs []Result) error {
	if rs == nil {
		_, err := bw.WriteString("null")
		return err
	}
	l := newJSONList(bw)
	for i := range rs {
		if err := l.add(&rs[i]); err != nil {
			return err
		}
	}
	return l.end()
}

// WriteJUnit writes one testsuite per rail and one testcase per directional
// cell, so CI shows "rail-1 / node-03 -> node-07" as a failed test whose
// message is the cause and the fix. Untested
// cells are failures too, not skips: the gate must not pass a sweep that
// measured only half the fabric.
func (m *Matrix) WriteJUnit(w io.Writer) error {
	doc := junit.Suites{Name: "rdmamesh", Suites: make([]junit.Suite, m.Rails)}
	for r := range doc.Suites {
		doc.Suites[r].Name = railKey(r)
	}
	err := m.EachCell(func(_ int, c *Result) error {
		if c.Rail < 0 || c.Rail >= len(doc.Suites) {
			return nil // impossible from Build; a hand-made Matrix must not panic us
		}
		if c.Verdict == VerdictUntested && m.Thresholds.TestedOnly {
			return nil // not in the sweep's plan
		}
		s := &doc.Suites[c.Rail]
		addCase(&doc, s, c, c.Src+" -> "+c.Dst)
		return nil
	})
	if err != nil {
		return err
	}
	if len(m.Cross) > 0 {
		doc.Suites = append(doc.Suites, junit.Suite{Name: "cross-rail"})
		s := &doc.Suites[len(doc.Suites)-1]
		for i := range m.Cross {
			c := &m.Cross[i]
			addCase(&doc, s, c, fmt.Sprintf("%s rail-%d -> %s rail-%d", c.Src, c.Rail, c.Dst, crossDst(c)))
		}
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}

func addCase(doc *junit.Suites, s *junit.Suite, c *Result, name string) {
	tc := junit.Case{Name: name, Classname: "rdmamesh." + s.Name}
	if c.Verdict != VerdictOK {
		// The message is what most CI pages show in their list of
		// failures: cause and fix, so nobody has to open the body.
		tc.Failure = &junit.Message{
			Message: string(c.Verdict) + ": " + c.Reason + "; fix: " + cellFix(c),
			Type:    string(c.Verdict),
			Text:    failureText(c),
		}
		s.Failures++
		doc.Failures++
	}
	s.Tests++
	doc.Tests++
	s.Cases = append(s.Cases, tc)
}

func crossDst(c *Result) int {
	if c.DstRail != nil {
		return *c.DstRail
	}
	return c.Rail
}

// failureText is what a CI page shows under the failed test: enough to act
// on without opening the JSON.
func failureText(c *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %s\n", c.Verdict)
	if c.Class != "" {
		fmt.Fprintf(&b, "class: %s\n", c.Class)
	}
	fmt.Fprintf(&b, "devices: %s -> %s\n", c.SrcDevice, c.DstDevice)
	fmt.Fprintf(&b, "cause: %s\n", c.Reason)
	if e := c.Error; e != nil && (e.Verb != "" || e.Errno != 0 || e.WCStatus != 0) {
		fmt.Fprintf(&b, "where: %s\n", e.Error())
	}
	if c.Latency != nil {
		fmt.Fprintf(&b, "latency: p50 %s, p99 %s\n", formatNs(c.Latency.P50Ns), formatNs(c.Latency.P99Ns))
	}
	if c.Bandwidth != nil {
		fmt.Fprintf(&b, "bandwidth: %s Gb/s\n", sig3(c.Bandwidth.Gbps))
	}
	fmt.Fprintf(&b, "fix: %s\n", cellFix(c))
	return b.String()
}
