package coordinator

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// resultCells maps a worker's answer onto the rails asked for, whatever
// order it answers them in; a rail it left out, or answered without a
// class, is an internal error in its cell, and a worker short of its own
// resources makes every cell a tester cell without figures.
func TestResultCells(t *testing.T) {
	asked := []probe.RailPair{{Rail: 0}, {Rail: 1}, {Rail: 2}}
	lat := func(r int) *probe.Latency { return &probe.Latency{P50Ns: float64(1000 + r)} }
	ok := func(r int) wire.RailResult { return wire.RailResult{Rail: r, Class: probe.ClassOK, Latency: lat(r)} }
	for _, tc := range []struct {
		name   string
		got    []wire.RailResult
		tester *probe.Error
		want   string
	}{
		{"in order", []wire.RailResult{ok(0), ok(1), ok(2)}, nil, "0:ok:1000 1:ok:1001 2:ok:1002"},
		{"reversed", []wire.RailResult{ok(2), ok(1), ok(0)}, nil, "0:ok:1000 1:ok:1001 2:ok:1002"},
		{"one left out", []wire.RailResult{ok(0), ok(2)}, nil, "0:ok:1000 1:internal:0 2:ok:1002"},
		{"no class", []wire.RailResult{ok(0), {Rail: 1}, ok(2)}, nil, "0:ok:1000 1:internal:0 2:ok:1002"},
		{"none", nil, nil, "0:internal:0 1:internal:0 2:internal:0"},
		{"tester", []wire.RailResult{ok(0), ok(1), ok(2)}, &probe.Error{Class: probe.ClassTester, Cause: "EMFILE"}, "0:tester:0 1:tester:0 2:tester:0"},
	} {
		cells := resultCells(nil, liteRoom{}, &figKeep{}, "a", "b", 4, asked, tc.got, tc.tester)
		got := ""
		for i, c := range cells {
			p50 := 0.0
			if c.Latency != nil {
				p50 = c.Latency.P50Ns
			}
			if i > 0 {
				got += " "
			}
			got += fmt.Sprintf("%d:%s:%g", c.Rail, c.Class, p50)
			if c.Src != "a" || c.Dst != "b" || c.Round != 4 || c.Class != probe.ClassOK && c.Error == nil {
				t.Errorf("%s: cell %+v", tc.name, c)
			}
		}
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// A plain rail (ok, latency alone, its codes, the same rail at both ends)
// goes to the lite room as the two ends' positions and the codes; every
// other rail, a tester's answer and a rail past a full room stay cells.
func TestResultCellsLite(t *testing.T) {
	q := func(r int) *wire.LatQ { return &wire.LatQ{uint16(r), uint16(100 + r), 3, 4, 5, 6, 7} }
	plain := func(r int) wire.RailResult {
		return wire.RailResult{Rail: r, Class: probe.ClassOK, Latency: &probe.Latency{Samples: 1000 + r, P50Ns: 1}, LatencyQ: q(r)}
	}
	withErr, withBW, noCodes := plain(1), plain(2), plain(3)
	withErr.Error = &probe.Error{Class: probe.ClassOK, Cause: "note"}
	withBW.Bandwidth = &probe.Bandwidth{Gbps: 1}
	noCodes.LatencyQ = nil
	got := []wire.RailResult{plain(0), withErr, withBW, noCodes, plain(4), plain(5)}
	var asked []probe.RailPair
	for r := range 5 {
		asked = append(asked, probe.RailPair{Rail: r, Dst: probe.Endpoint{Rail: r}})
	}
	asked = append(asked, probe.RailPair{Rail: 5, Dst: probe.Endpoint{Rail: 4}}) // cross-rail
	for _, tc := range []struct {
		name      string
		room      int
		src, dst  int
		tester    *probe.Error
		lite      []int // rails that went lite
		cellRails []int
	}{
		{"plain rails lite", 8, 7, 9, nil, []int{0, 4}, []int{1, 2, 3, 5}},
		{"room for one", 1, 7, 9, nil, []int{0}, []int{1, 2, 3, 4, 5}},
		{"tester", 8, 7, 9, &probe.Error{Class: probe.ClassTester, Cause: "EMFILE"}, nil, []int{0, 1, 2, 3, 4, 5}},
		{"ends not listed", 8, -1, 9, nil, nil, []int{0, 1, 2, 3, 4, 5}},
		{"same end", 8, 9, 9, nil, nil, []int{0, 1, 2, 3, 4, 5}},
	} {
		room := make([]sweep.LiteCell, 0, tc.room)
		cells := resultCells(nil, liteRoom{&room, tc.src, tc.dst}, &figKeep{}, "a", "b", 4, asked, got, tc.tester)
		var lite, rails []int
		for _, l := range room {
			lite = append(lite, int(l.Rail))
			r := int(l.Rail)
			if l.Src != int32(tc.src) || l.Dst != int32(tc.dst) || l.Samples != uint32(1000+r) || l.Codes != *q(r) {
				t.Errorf("%s: lite cell %+v", tc.name, l)
			}
		}
		for _, c := range cells {
			rails = append(rails, c.Rail)
		}
		if !slices.Equal(lite, tc.lite) || !slices.Equal(rails, tc.cellRails) {
			t.Errorf("%s: lite rails %v, cells on %v; want %v and %v", tc.name, lite, rails, tc.lite, tc.cellRails)
		}
	}
}
