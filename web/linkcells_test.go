package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// fabricTree is 8 nodes on 2 rails, 2 nodes a leaf, 4 leaves and 2 spines
// a rail. Node i is n%02d of (3i mod 8), so name order is not leaf order:
// leaf 0 has n00 and n03, leaf 1 n06 and n01, leaf 2 n04 and n07, leaf 3
// n02 and n05.
func fabricTree(tb testing.TB) *topology.Topology {
	tb.Helper()
	ft, err := topology.ParseFatTree("nodes=8,rails=2,leaf=2,spines=2")
	if err != nil {
		tb.Fatal(err)
	}
	ft.NodeName = func(i int) string { return fmt.Sprintf("n%02d", i*3%8) }
	topo, err := ft.Generate()
	if err != nil {
		tb.Fatal(err)
	}
	return topo
}

// fabricSweep is a full sweep of fabricTree's nodes whose cells carry
// flows; the tests whose writes cross the uplink leaf-r0-00:3 →
// spine-r0-00:1 failed, listed in failed ("src>dst"). rail1 false leaves
// rail 1 untested.
func fabricSweep(tb testing.TB, topo *topology.Topology, rail1 bool) (m *matrix.Matrix, uplink int, failed []string) {
	tb.Helper()
	up, err := topo.TargetLinks("", "leaf-r0-00:3", "spine-r0-00:1", true)
	if err != nil {
		tb.Fatal(err)
	}
	var nodes []matrix.Node
	for i := range 8 {
		n := matrix.Node{Name: fmt.Sprintf("n%02d", i), State: "alive", Labels: map[string]string{"rack": fmt.Sprintf("r%d", i%2)}}
		for r := range 2 {
			n.Ports = append(n.Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r, State: "ACTIVE", RateGbps: 400, Usable: true})
		}
		nodes = append(nodes, n)
	}
	var cells []matrix.Cell
	for r := range 2 {
		if r == 1 && !rail1 {
			break
		}
		for s := range nodes {
			for d := range nodes {
				if s == d {
					continue
				}
				c := matrix.Cell{Src: nodes[s].Name, Dst: nodes[d].Name, Rail: r, Round: 1, Class: probe.ClassOK,
					SrcDevice: fmt.Sprintf("mlx5_%d", r), DstDevice: fmt.Sprintf("mlx5_%d", r),
					Flow: uint16(0xC000 + s*97 + d*13 + r), BackFlow: uint16(0xC800 + d*89 + s*7 + r),
					Latency:   &probe.Latency{Samples: 1000, MinNs: 1800, P50Ns: 2000 + float64(s+d), P99Ns: 2600},
					Bandwidth: &probe.Bandwidth{Gbps: 390, Bytes: 1 << 24}}
				hs, _ := topo.HCA(c.Src, r)
				hd, _ := topo.HCA(c.Dst, r)
				if p, _ := topo.Route(nil, hs, hd, uint32(c.Flow)); slices.Contains(p, topology.Link(up[0])) {
					c.Class, c.Latency, c.Bandwidth = probe.ClassRetryExceeded, nil, nil
					c.Error = &probe.Error{Class: probe.ClassRetryExceeded, Cause: "packets to the peer are lost"}
					failed = append(failed, c.Src+">"+c.Dst)
				}
				cells = append(cells, c)
			}
		}
	}
	return matrix.AnalyseOn(topo, nodes, nil, cells, matrix.DefaultThresholds()), topology.Link(up[0]).Cable(), failed
}

// sweepTopoBackend keeps the topology each sweep ran on (ran; nil: none)
// beside the current one.
type sweepTopoBackend struct {
	topoBackend
	ran map[string]*topology.Topology
}

func (b sweepTopoBackend) SweepTopology(id string) *topology.Topology { return b.ran[id] }

// reversed is t with its cables listed backwards: another version of the
// same fabric, each cable under another index.
func reversed(tb testing.TB, t *topology.Topology) *topology.Topology {
	tb.Helper()
	cables := slices.Clone(t.Cables)
	slices.Reverse(cables)
	r, err := topology.New(t.LinkLayer, slices.Clone(t.Switches), slices.Clone(t.HCAs), cables)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

type linkCellsAnswer struct {
	Sweep   string         `json:"sweep"`
	Limit   int            `json:"limit"`
	Cable   int            `json:"cable"`
	Ends    []string       `json:"ends"`
	Crossed int            `json:"crossed"`
	Unknown int            `json:"unknown"`
	Counts  map[string]int `json:"counts"`
	Cells   []struct {
		Src         string         `json:"src"`
		Dst         string         `json:"dst"`
		Rail        int            `json:"rail"`
		Verdict     string         `json:"verdict"`
		PathVerdict string         `json:"path_verdict"`
		Class       string         `json:"class"`
		Data        string         `json:"data"`
		Return      string         `json:"return"`
		Latency     *probe.Latency `json:"latency"`
	} `json:"cells"`
}

func TestLinkCellsEndpoint(t *testing.T) {
	topo := fabricTree(t)
	full, uplink, failed := fabricSweep(t, topo, true)
	if len(failed) == 0 {
		t.Fatal("no test crosses the uplink: the fixture fails nothing")
	}
	rail0, _, _ := fabricSweep(t, topo, false)
	rail1Uplink := -1
	if ls, err := topo.TargetLinks("", "leaf-r1-00:3", "spine-r1-00:1", true); err == nil {
		rail1Uplink = topology.Link(ls[0]).Cable()
	}
	withTopo := func(m *matrix.Matrix) Backend {
		f := newFake()
		f.matrices["s1"], f.matrices["s2"] = m, m
		return topoBackend{f, topo}
	}
	noTopo := newFake()
	noTopo.matrices["s1"] = full
	// The Fabric view draws the current topology; the sweeps ran on
	// older versions: the same cables listed backwards (s1), or none (s2).
	current := reversed(t, topo)
	versions := sweepTopoBackend{withTopo(full).(topoBackend), map[string]*topology.Topology{"s1": topo}}
	versions.t = current
	upNow, _ := sameCable(topo, current, uplink)
	recabled, err := topology.ParseFatTree("nodes=8,rails=2,leaf=2,spines=1")
	if err != nil {
		t.Fatal(err)
	}
	recabled.NodeName = func(i int) string { return fmt.Sprintf("n%02d", i*3%8) }
	recabledTopo, err := recabled.Generate()
	if err != nil {
		t.Fatal(err)
	}
	moved := versions
	moved.t = recabledTopo
	newCable, err := recabledTopo.TargetLinks("", "leaf-r0-00:4", "spine-r0-00:2", true)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		b      Backend
		path   string
		status int
		field  string
		errHas string
		check  func(t *testing.T, a linkCellsAnswer)
	}{
		{name: "the lossy uplink: its failed tests first, then the ok ones", b: withTopo(full),
			path: fmt.Sprintf("/api/v1/sweeps/s1/links/%d/cells", uplink), status: http.StatusOK,
			check: func(t *testing.T, a linkCellsAnswer) {
				t.Helper()
				var bad []string
				for i, c := range a.Cells {
					if c.PathVerdict == "failed" {
						bad = append(bad, c.Src+">"+c.Dst)
						if i > 0 && a.Cells[i-1].PathVerdict != "failed" {
							t.Errorf("failed cell %d (%s) after an ok one", i, bad[len(bad)-1])
						}
					}
					if c.Rail != 0 || (c.Data == "" && c.Return == "") {
						t.Errorf("cell %s>%s rail %d crossed neither way (data %q, return %q)", c.Src, c.Dst, c.Rail, c.Data, c.Return)
					}
				}
				slices.Sort(bad)
				slices.Sort(failed)
				if !slices.Equal(bad, failed) || a.Counts["failed"] != len(failed) {
					t.Errorf("failed cells listed %v (counted %d); want %v", bad, a.Counts["failed"], failed)
				}
				if a.Counts["ok"] == 0 || a.Crossed != len(a.Cells) || a.Crossed != a.Counts["ok"]+a.Counts["failed"] {
					t.Errorf("crossed %d, counts %v, %d listed; want ok tests too, all listed", a.Crossed, a.Counts, len(a.Cells))
				}
				if a.Sweep != "s1" || a.Limit != defaultLinkCells || a.Cable != uplink || strings.Join(a.Ends, " ") != "leaf-r0-00:3 spine-r0-00:1" {
					t.Errorf("answer names sweep %q, limit %d, cable %d %v", a.Sweep, a.Limit, a.Cable, a.Ends)
				}
			}},
		{name: "a limit keeps the worst and the counts", b: withTopo(full),
			path: fmt.Sprintf("/api/v1/sweeps/latest/links/%d/cells?limit=2", uplink), status: http.StatusOK,
			check: func(t *testing.T, a linkCellsAnswer) {
				t.Helper()
				if len(a.Cells) != 2 || a.Cells[0].PathVerdict != "failed" || a.Cells[1].PathVerdict != "failed" || a.Counts["failed"] != len(failed) {
					t.Errorf("limit 2 listed %+v with counts %v; want 2 failed cells of %d", a.Cells, a.Counts, len(failed))
				}
				if a.Sweep != "s2" || a.Cells[0].Latency != nil || a.Cells[0].Class != "retry-exceeded" {
					t.Errorf("latest is sweep %q; first cell %+v", a.Sweep, a.Cells[0])
				}
			}},
		{name: "a link with no cells: rail 1 untested", b: withTopo(rail0),
			path: fmt.Sprintf("/api/v1/sweeps/s1/links/%d/cells", rail1Uplink), status: http.StatusOK,
			check: func(t *testing.T, a linkCellsAnswer) {
				t.Helper()
				if a.Crossed != 0 || a.Unknown != 0 || a.Cells == nil || len(a.Cells) != 0 {
					t.Errorf("rail 1's uplink: crossed %d, unknown %d, cells %v; want 0, 0, []", a.Crossed, a.Unknown, a.Cells)
				}
			}},
		{name: "a sweep on an older version of the topology: the cable found by its ends", b: versions,
			path: fmt.Sprintf("/api/v1/sweeps/s1/links/%d/cells", upNow), status: http.StatusOK,
			check: func(t *testing.T, a linkCellsAnswer) {
				t.Helper()
				if a.Cable != upNow || upNow == uplink || strings.Join(a.Ends, " ") != "leaf-r0-00:3 spine-r0-00:1" ||
					a.Counts["failed"] != len(failed) || a.Cells[0].PathVerdict != "failed" {
					t.Errorf("link %d (the uplink's index now; %d then): cable %d %v, counts %v", upNow, uplink, a.Cable, a.Ends, a.Counts)
				}
			}},
		{name: "a sweep that ran without a topology", b: versions, path: fmt.Sprintf("/api/v1/sweeps/s2/links/%d/cells", upNow),
			status: http.StatusNotFound, errHas: `sweep "s2" ran without a topology`},
		{name: "a cable cabled after the sweep", b: moved, path: fmt.Sprintf("/api/v1/sweeps/s1/links/%d/cells", topology.Link(newCable[0]).Cable()),
			status: http.StatusNotFound, field: "link", errHas: `leaf-r0-00:4 <-> spine-r0-00:2, is not in the topology sweep "s1" ran on`},
		{name: "an unknown link id", b: withTopo(full), path: "/api/v1/sweeps/s1/links/999/cells",
			status: http.StatusNotFound, field: "link", errHas: fmt.Sprintf(`no link "999": a link is named by its cable's index in GET /api/v1/topology's cables, 0 to %d`, len(topo.Cables)-1)},
		{name: "a link id that is no number", b: withTopo(full), path: "/api/v1/sweeps/s1/links/leaf-r0-00:3/cells",
			status: http.StatusNotFound, field: "link", errHas: `no link "leaf-r0-00:3"`},
		{name: "a negative link id", b: withTopo(full), path: "/api/v1/sweeps/s1/links/-1/cells",
			status: http.StatusNotFound, field: "link", errHas: `no link "-1"`},
		{name: "a coordinator without a topology", b: noTopo, path: "/api/v1/sweeps/s1/links/0/cells",
			status: http.StatusNotFound, errHas: "no link to list cells for: this coordinator has no topology: give coordinator.topology"},
		{name: "an unknown sweep", b: withTopo(full), path: "/api/v1/sweeps/nope/links/0/cells",
			status: http.StatusNotFound, errHas: `no sweep "nope"`},
		{name: "a limit of 0", b: withTopo(full), path: "/api/v1/sweeps/s1/links/0/cells?limit=0",
			status: http.StatusBadRequest, field: "limit", errHas: fmt.Sprintf(`limit "0" is not a number from 1 to %d`, maxLinkCells)},
		{name: "a limit past the most", b: withTopo(full), path: fmt.Sprintf("/api/v1/sweeps/s1/links/0/cells?limit=%d", maxLinkCells+1),
			status: http.StatusBadRequest, field: "limit", errHas: "is not a number from 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			New(tc.b, Options{}).Handler().ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
			if rec.Code != tc.status {
				t.Fatalf("GET %s: %d %s; want %d", tc.path, rec.Code, rec.Body, tc.status)
			}
			if tc.status != http.StatusOK {
				var e api.Error
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Field != tc.field || !strings.Contains(e.Error, tc.errHas) {
					t.Fatalf("GET %s: error %+v (%v); want field %q and %q", tc.path, e, err, tc.field, tc.errHas)
				}
				return
			}
			var a linkCellsAnswer
			if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
				t.Fatal(err)
			}
			tc.check(t, a)
		})
	}
}
