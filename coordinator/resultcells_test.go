package coordinator

import (
	"fmt"
	"testing"

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
		cells := resultCells(nil, "a", "b", 4, asked, tc.got, tc.tester)
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
