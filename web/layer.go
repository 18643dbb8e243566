package web

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/rdmamesh/rdmamesh/matrix"
)

// A layer is one heatmap as the UI draws it: one byte per (src, dst) pair in
// display order for one metric on one rail, or the worst over all rails.
// Exact figures for 8.4 M cells cannot fit the UI's 2 MB budget, and a screen
// cannot show more than a colour per pair anyway; exact values come from the
// pair endpoint when the operator points at a cell.
//
// Wire format (little endian):
//
//	"RML1"  uint32 header length H  H bytes of JSON layerHeader  n*n code bytes
//
// Row i is the initiator (src) at display position i, column j the target.
//
// Status codes are ordered by severity, so "worst over rails" is max:
//
//	0 no cell (diagonal, node without that rail)  1 ok  2 untested
//	3 slow-latency  4 low-bandwidth  5 failed
//
// Value codes:
//
//	0 no cell  1 untested  2 failed (no figure)  3..255 bucket b of the scale
//
// Bucket b stands for fraction t = (b - 3 + 0.5) / 253 of the scale: on a
// linear scale value = lo + t*(hi-lo), on a log scale value = lo*(hi/lo)^t.
const (
	layerMagic = "RML1"

	codeNone = 0

	statusOK       = 1
	statusUntested = 2
	statusSlow     = 3
	statusLowBW    = 4
	statusFailed   = 5

	valueUntested = 1
	valueFailed   = 2
	firstBucket   = 3
	buckets       = 256 - firstBucket
)

// allRails is the rail of a layer that folds every rail into its worst.
const allRails = -1

func statusOf(v matrix.Verdict) byte {
	switch v {
	case matrix.VerdictOK:
		return statusOK
	case matrix.VerdictSlowLatency:
		return statusSlow
	case matrix.VerdictLowBandwidth:
		return statusLowBW
	case matrix.VerdictFailed:
		return statusFailed
	}
	return statusUntested // and any verdict newer than this code
}

// scale maps a metric's figures onto the buckets. Lo and Hi are in Unit.
type scale struct {
	Kind string  `json:"kind"` // linear | log
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

func (s scale) bucket(x float64) byte {
	var t float64
	switch {
	case s.Hi <= s.Lo:
		t = 0
	case s.Kind == "log":
		t = math.Log(x/s.Lo) / math.Log(s.Hi/s.Lo)
	default:
		t = (x - s.Lo) / (s.Hi - s.Lo)
	}
	if !(t > 0) { // also NaN
		t = 0
	}
	return byte(firstBucket + min(int(t*buckets), buckets-1))
}

// value is the figure a bucket stands for: the middle of its interval.
func (s scale) value(b byte) float64 {
	t := (float64(b) - firstBucket + 0.5) / buckets
	if s.Kind == "log" && s.Lo > 0 && s.Hi > s.Lo {
		return s.Lo * math.Pow(s.Hi/s.Lo, t)
	}
	return s.Lo + t*(s.Hi-s.Lo)
}

// metric is one numeric heatmap the UI offers besides status.
type metric struct {
	name, label, unit string
	better            string // lower | higher: which way is healthy
	fixed             bool   // the scale does not depend on the figures
	value             func(v *view, c *matrix.Result, si, dj int32) (float64, bool)
	scale             func(e extent) scale
}

// latencyScale is logarithmic and at least 4x wide: a healthy rail's few
// percent of jitter stays in the fast end instead of spanning the whole
// palette, and a 5x slow node still stands out from a 50x one.
func latencyScale(e extent) scale {
	if e.empty() || e.lo <= 0 {
		return scale{Kind: "log", Lo: 1, Hi: 4}
	}
	return scale{Kind: "log", Lo: e.lo, Hi: max(e.hi, 4*e.lo)}
}

var valueMetrics = []metric{
	{name: "p50", label: "p50 latency", unit: "ns", better: "lower", scale: latencyScale,
		value: func(_ *view, c *matrix.Result, _, _ int32) (float64, bool) {
			return positive(c.Latency != nil, func() float64 { return c.Latency.P50Ns })
		}},
	{name: "p99", label: "p99 latency", unit: "ns", better: "lower", scale: latencyScale,
		value: func(_ *view, c *matrix.Result, _, _ int32) (float64, bool) {
			return positive(c.Latency != nil, func() float64 { return c.Latency.P99Ns })
		}},
	// Bandwidth starts at zero so healthy cells read as one colour and a
	// 40% link is visibly darker, rather than stretching jitter over the palette.
	{name: "bw", label: "bandwidth", unit: "Gb/s", better: "higher",
		scale: func(e extent) scale { return scale{Kind: "linear", Lo: 0, Hi: max(e.hi, 1)} },
		value: func(_ *view, c *matrix.Result, _, _ int32) (float64, bool) {
			return positive(c.Bandwidth != nil, func() float64 { return c.Bandwidth.Gbps })
		}},
	{name: "line", label: "% of line rate", unit: "%", better: "higher", fixed: true,
		scale: func(extent) scale { return scale{Kind: "linear", Lo: 0, Hi: 100} },
		value: func(v *view, c *matrix.Result, si, dj int32) (float64, bool) {
			r := v.rate(c, si, dj)
			if c.Bandwidth == nil || c.Bandwidth.Gbps <= 0 || r <= 0 {
				return 0, false
			}
			return 100 * c.Bandwidth.Gbps / r, true
		}},
}

func positive(has bool, get func() float64) (float64, bool) {
	if !has {
		return 0, false
	}
	x := get()
	return x, x > 0 && !math.IsInf(x, 0)
}

func findMetric(name string) (metric, bool) {
	for _, m := range valueMetrics {
		if m.name == name {
			return m, true
		}
	}
	return metric{}, false
}

// layerHeader is the JSON header of a layer body.
type layerHeader struct {
	Version int    `json:"version"`
	Metric  string `json:"metric"` // status | p50 | p99 | bw | line
	Rail    int    `json:"rail"`   // -1 = worst over all rails
	N       int    `json:"n"`
	// Order is the grid's order key: the layer's rows and columns are in
	// that grid's node order.
	Order string `json:"order"`
	// For value metrics: the scale, its unit, and which way is healthy.
	Unit   string `json:"unit,omitempty"`
	Better string `json:"better,omitempty"`
	Scale  *scale `json:"scale,omitempty"`
	// Counts of codes in the body, so the legend can say how many cells
	// each colour stands for without a pass over the bytes.
	Counts []int `json:"counts"`
}

// encodeLayer renders one layer. rail is a rail number or allRails. When
// ctx ends first it fails with ctx's error and keeps nothing half-built.
func (v *view) encodeLayer(ctx context.Context, metricName string, rail int) ([]byte, error) {
	h := layerHeader{Version: 1, Metric: metricName, Rail: rail, N: v.n, Order: v.orderKey, Counts: make([]int, 256)}
	var mt metric
	if metricName != "status" {
		var ok bool
		if mt, ok = findMetric(metricName); !ok {
			return nil, fmt.Errorf("unknown metric %q", metricName)
		}
		sc, err := v.scale(ctx, metricName)
		if err != nil {
			return nil, err
		}
		h.Unit, h.Better, h.Scale = mt.unit, mt.better, &sc
	}
	var grids [][]byte
	if metricName == "status" {
		grids = v.status
	} else {
		var err error
		if grids, err = v.grids(ctx, mt); err != nil {
			return nil, err
		}
	}
	body := make([]byte, v.n*v.n)
	switch {
	case rail != allRails:
		copy(body, grids[rail])
	case metricName == "status":
		for _, g := range grids {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			for i, c := range g {
				body[i] = max(body[i], c)
			}
		}
	default:
		lower := mt.better == "lower"
		for _, g := range grids {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			for i, c := range g {
				body[i] = mergeValue(body[i], c, lower)
			}
		}
	}
	for _, b := range body {
		h.Counts[b]++
	}
	// Trim the counts to the codes in use; the UI reads absent as zero.
	last := 0
	for i, c := range h.Counts {
		if c > 0 {
			last = i
		}
	}
	h.Counts = h.Counts[:last+1]
	js, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 8+len(js)+len(body))
	out = append(out, layerMagic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(js)))
	out = append(out, js...)
	return append(out, body...), nil
}

func valueCode(v *view, mt metric, sc scale, c *matrix.Result, si, dj int32) byte {
	switch c.Verdict {
	case matrix.VerdictUntested:
		return valueUntested
	case matrix.VerdictFailed:
		return valueFailed
	}
	x, ok := mt.value(v, c, si, dj)
	if !ok {
		// Measured but without this figure (a quick sweep has no
		// bandwidth): nothing to colour.
		return valueUntested
	}
	return sc.bucket(x)
}

// mergeValue folds one rail's code into a pair's: a failed rail wins (its
// healthy siblings must not hide it), then the worse figure, then untested.
func mergeValue(have, got byte, lowerIsBetter bool) byte {
	switch {
	case have == valueFailed || got == valueFailed:
		return valueFailed
	case have >= firstBucket && got >= firstBucket:
		if lowerIsBetter {
			return max(have, got)
		}
		return min(have, got)
	}
	return max(have, got) // none < untested < any bucket
}

// decodeLayer splits a layer body; the tests and the benchmark use it to
// prove the format round-trips.
func decodeLayer(b []byte) (layerHeader, []byte, error) {
	var h layerHeader
	if len(b) < 8 || string(b[:4]) != layerMagic {
		return h, nil, errors.New("not a layer: bad magic")
	}
	hl := int(binary.LittleEndian.Uint32(b[4:8]))
	if hl > len(b)-8 {
		return h, nil, errors.New("layer header runs past the body")
	}
	if err := json.Unmarshal(b[8:8+hl], &h); err != nil {
		return h, nil, err
	}
	body := b[8+hl:]
	if len(body) != h.N*h.N {
		return h, nil, fmt.Errorf("layer body has %d bytes, want %d", len(body), h.N*h.N)
	}
	return h, body, nil
}
