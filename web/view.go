package web

import (
	"cmp"
	"context"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// view is what the UI's compact API derives from one analysed matrix:
// the display order (by switch group, then name, so a group fault is a
// block; the groups are leaves when the backend has a topology), per-HCA tallies and one colour scale per metric. It is built once
// per *matrix.Matrix: the backend hands out an immutable matrix per sweep
// version, so the pointer is the version.
type view struct {
	m      *matrix.Matrix
	n      int
	order  []int32          // display position → index in m.Nodes
	pos    []int32          // index in m.Nodes → display position
	byName map[string]int32 // node name → index in m.Nodes
	groups []gridGroup
	// groupLabel says what the groups are (a label key, or the leaves of
	// a rail), group each node's (index in m.Nodes; "" for none).
	groupLabel string
	group      []string
	// orderKey names the display order (a hash of the names in it). The
	// grid and every layer carry it, so the UI can tell a layer of another
	// order from the grid it holds: the live matrix's nodes change with
	// membership between one request and the next.
	orderKey string
	rates    []float64 // m.Nodes index*rails + rail → port Gb/s, 0 unknown
	hca      []hcaTally

	overviewOnce sync.Once
	ov           overview // see overview

	// scales is every value metric's scale (see scale), nil until one walk
	// computed them all: a walk given up midway leaves it nil.
	scalesMu sync.Mutex
	scales   map[string]scale

	// Per rail: one code per pair in display order (the layer body of that
	// rail). status is filled by newView and never changes after, so it is
	// read without a lock; a value metric's codes on first use, as most
	// sessions never leave the status view, under mu (held while they are
	// walked). Only complete grids are stored.
	status [][]byte
	mu     sync.Mutex
	codes  map[string][][]byte
}

// hcaTally counts one (node, rail) HCA's same-rail cells, as initiator or
// target; bad means failed, slow or low bandwidth.
type hcaTally struct{ bad, tested, total int32 }

type gridGroup struct {
	Name  string `json:"name"`
	Start int    `json:"start"` // first display position
	Count int    `json:"count"`
}

// newView builds m's view, its node order from topo when that has the
// sweep's nodes (nil: from the labels); it fails only when ctx ends
// during its walk.
func newView(ctx context.Context, m *matrix.Matrix, topo *topology.Topology) (*view, error) {
	n := len(m.Nodes)
	v := &view{m: m, n: n, order: make([]int32, n), pos: make([]int32, n), byName: make(map[string]int32, n)}
	for i, nd := range m.Nodes {
		v.byName[nd.Name] = int32(i)
		v.order[i] = int32(i)
	}
	v.groupLabel, v.group = nodeGroups(m, topo)
	groupOf := func(i int32) string { return v.group[i] }
	// Ungrouped nodes go last, as one "(no group)" block.
	slices.SortStableFunc(v.order, func(a, b int32) int {
		ga, gb := groupOf(a), groupOf(b)
		if (ga == "") != (gb == "") {
			if ga == "" {
				return 1
			}
			return -1
		}
		return cmp.Or(naturalCompare(ga, gb), cmp.Compare(m.Nodes[a].Name, m.Nodes[b].Name))
	})
	for p, i := range v.order {
		v.pos[i] = int32(p)
		g := groupOf(i)
		if k := len(v.groups) - 1; k >= 0 && v.groups[k].Name == g {
			v.groups[k].Count++
			continue
		}
		v.groups = append(v.groups, gridGroup{Name: g, Start: p, Count: 1})
	}
	h := fnv.New64a()
	for _, i := range v.order {
		h.Write([]byte(m.Nodes[i].Name))
		h.Write([]byte{0})
	}
	v.orderKey = strconv.FormatUint(h.Sum64(), 36)
	rails := max(m.Rails, 0)
	v.rates = make([]float64, n*rails)
	for i, nd := range m.Nodes {
		for k, p := range nd.Ports {
			r := p.Rail
			if r < 0 || r >= rails {
				r = k // Ports is indexed by rail; Rail is a hint
			}
			if r < rails {
				v.rates[i*rails+r] = p.RateGbps
			}
		}
	}
	if err := v.tally(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// tally walks the cells once for the status codes and the per-HCA counts:
// all the first paint needs. It reads only each cell's place, rail and
// verdict; the figures (decoded from the store's codes on a coordinator)
// are read on the first value layer: at 4,096 x 8 they were four fifths of
// a first paint the server built on the request.
func (v *view) tally(ctx context.Context) error {
	rails := max(v.m.Rails, 0)
	status := v.newGrids(rails)
	parts, err := v.eachVerdict(ctx, func() any { return make([]hcaTally, v.n*rails) }, func(acc any, verdict matrix.Verdict, rail int, si, dj int32) {
		hca := acc.([]hcaTally)
		code := statusOf(verdict)
		status[rail][int(v.pos[si])*v.n+int(v.pos[dj])] = code
		for _, x := range [2]int32{si, dj} {
			t := &hca[int(x)*rails+rail]
			t.total++
			if code != statusUntested {
				t.tested++
			}
			if code >= statusSlow {
				t.bad++
			}
		}
	})
	if err != nil {
		return err
	}
	v.hca = make([]hcaTally, v.n*rails)
	for _, a := range parts {
		for i, t := range a.([]hcaTally) {
			v.hca[i].bad += t.bad
			v.hca[i].tested += t.tested
			v.hca[i].total += t.total
		}
	}
	v.status, v.codes = status, map[string][][]byte{}
	return nil
}

// scale returns a value metric's scale, computing every metric's on first
// use from the measured cells; concurrent callers wait for the one walk.
func (v *view) scale(ctx context.Context, name string) (scale, error) {
	v.scalesMu.Lock()
	defer v.scalesMu.Unlock()
	if v.scales == nil {
		parts, err := v.each(ctx, func() any {
			ext := make([]extent, len(valueMetrics))
			for k := range ext {
				ext[k] = extent{lo: math.Inf(1), hi: math.Inf(-1)}
			}
			return ext
		}, func(acc any, c *matrix.Result, si, dj int32) {
			if c.Verdict == matrix.VerdictFailed || c.Verdict == matrix.VerdictUntested {
				return
			}
			ext := acc.([]extent)
			for i := range valueMetrics {
				if valueMetrics[i].fixed {
					continue
				}
				if val, ok := valueMetrics[i].value(v, c, si, dj); ok {
					ext[i].add(val)
				}
			}
		})
		if err != nil {
			return scale{}, err
		}
		scales := map[string]scale{}
		for i, mt := range valueMetrics {
			e := extent{lo: math.Inf(1), hi: math.Inf(-1)}
			for _, a := range parts {
				x := a.([]extent)[i]
				e.lo, e.hi = min(e.lo, x.lo), max(e.hi, x.hi)
			}
			scales[mt.name] = mt.scale(e)
		}
		v.scales = scales
	}
	return v.scales[name], nil
}

func (v *view) newGrids(rails int) [][]byte {
	g := make([][]byte, rails)
	for r := range g {
		g[r] = make([]byte, v.n*v.n)
	}
	return g
}

// grids returns the per-rail codes of a value metric, computing them on
// first use. One metric per pass: the first switch to a metric waits for
// one pass, not for all of them.
func (v *view) grids(ctx context.Context, mt metric) ([][]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if g, ok := v.codes[mt.name]; ok {
		return g, nil
	}
	sc, err := v.scale(ctx, mt.name)
	if err != nil {
		return nil, err
	}
	g := v.newGrids(max(v.m.Rails, 0))
	_, err = v.each(ctx, func() any { return nil }, func(_ any, c *matrix.Result, si, dj int32) {
		g[c.Rail][int(v.pos[si])*v.n+int(v.pos[dj])] = valueCode(v, mt, sc, c, si, dj)
	})
	if err != nil {
		return nil, err
	}
	v.codes[mt.name] = g
	return g, nil
}

// naturalCompare orders strings with their digit runs by number, so rack2
// comes before rack10.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), cmp.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func isBad(v matrix.Verdict) bool {
	return v == matrix.VerdictFailed || v == matrix.VerdictSlowLatency || v == matrix.VerdictLowBandwidth
}

// rate is the Gb/s a cell could reach: the slower end's port rate, 0 when
// neither end's rate is known.
func (v *view) rate(c *matrix.Result, si, dj int32) float64 {
	rails := max(v.m.Rails, 0)
	dr := c.Rail
	if c.DstRail != nil {
		dr = *c.DstRail
	}
	var a, b float64
	if c.Rail >= 0 && c.Rail < rails {
		a = v.rates[int(si)*rails+c.Rail]
	}
	if dr >= 0 && dr < rails {
		b = v.rates[int(dj)*rails+dr]
	}
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

type extent struct{ lo, hi float64 }

func (e *extent) add(x float64) {
	e.lo = min(e.lo, x)
	e.hi = max(e.hi, x)
}

func (e extent) empty() bool { return e.lo > e.hi }
