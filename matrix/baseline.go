package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Baseline is the reference a sweep is compared with: per-cell p50 and Gb/s
// from an earlier sweep that was known good. Save one with BaselineFrom and
// WriteJSON; LoadBaseline also reads a whole saved Matrix.
type Baseline struct {
	SchemaVersion int            `json:"schema_version"`
	Kind          string         `json:"kind"` // always "rdmamesh-baseline"
	Name          string         `json:"name"`
	Cells         []BaselineCell `json:"cells"`
}

// BaselineCell is one directional cell's reference figures; zero = unknown.
type BaselineCell struct {
	Src   string  `json:"src"`
	Dst   string  `json:"dst"`
	Rail  int     `json:"rail"`
	P50Ns float64 `json:"p50_ns,omitempty"`
	Gbps  float64 `json:"gbps,omitempty"`
}

const baselineKind = "rdmamesh-baseline"

// BaselineFrom keeps the figures of m's ok cells. Bad cells are left out so
// a fault present when the baseline was taken never becomes the reference.
func BaselineFrom(m *Matrix, name string) *Baseline {
	b := &Baseline{SchemaVersion: SchemaVersion, Kind: baselineKind, Name: name}
	// The function never fails, so neither does EachCell.
	_ = m.EachCell(func(_ int, c *Result) error {
		if c.Verdict != VerdictOK {
			return nil
		}
		bc := BaselineCell{Src: c.Src, Dst: c.Dst, Rail: c.Rail}
		if p, ok := p50(c); ok {
			bc.P50Ns = p
		}
		if g, ok := gbps(c); ok && g > 0 {
			bc.Gbps = g
		}
		if bc.P50Ns > 0 || bc.Gbps > 0 {
			b.Cells = append(b.Cells, bc)
		}
		return nil
	})
	return b
}

// WriteJSON writes the baseline file LoadBaseline reads.
func (b *Baseline) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(b)
}

// LoadBaseline reads a baseline file, or a Matrix JSON (as `rdmamesh gate
// --json` writes it), which becomes a baseline of its ok cells named after
// the name argument.
func LoadBaseline(r io.Reader, name string) (*Baseline, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", name, err)
	}
	var probe struct {
		Kind  string          `json:"kind"`
		Nodes json.RawMessage `json:"nodes"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("baseline %s: not JSON: %w", name, err)
	}
	switch {
	case probe.Kind == baselineKind:
		var b Baseline
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			return nil, fmt.Errorf("baseline %s: %w", name, err)
		}
		for i, c := range b.Cells {
			if c.Src == "" || c.Dst == "" || c.Rail < 0 || c.P50Ns < 0 || c.Gbps < 0 {
				return nil, fmt.Errorf("baseline %s: cell %d (%s -> %s rail %d) is incomplete or negative", name, i, c.Src, c.Dst, c.Rail)
			}
		}
		if b.Name == "" {
			b.Name = name
		}
		return &b, nil
	case probe.Nodes != nil:
		var m Matrix
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("baseline %s: not a matrix: %w", name, err)
		}
		return BaselineFrom(&m, name), nil
	}
	return nil, fmt.Errorf(`baseline %s: neither a baseline file (kind %q) nor a matrix (no "nodes")`, name, baselineKind)
}
