package web

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// cablingFake judges every sweep the same: one swapped pair of HCAs.
type cablingFake struct {
	*fakeBackend
	asked []string // the sweeps asked for
}

func (f *cablingFake) Cabling(sweep string) (*cabling.Report, api.CablingSource, bool) {
	f.asked = append(f.asked, sweep)
	if sweep != "" && sweep != "s1" && sweep != "s2" {
		return nil, api.CablingSource{}, false
	}
	rep := &cabling.Report{Planned: true, Counts: map[cabling.Verdict]int{cabling.Swapped: 1, cabling.OK: 1}, Ports: []cabling.Finding{
		{Verdict: cabling.Swapped, End: "n1/mlx5_0", Node: "n1", HCA: "mlx5_0", Expected: "leaf-r0-01:1", Found: "leaf-r1-01:1",
			With: "n1/mlx5_1", Evidence: cabling.EvidenceHost, Action: "swap the cables of n1/mlx5_0 and n1/mlx5_1"},
		{Verdict: cabling.OK, End: "n2/mlx5_0", Node: "n2", HCA: "mlx5_0", Expected: "leaf-r0-01:2", Found: "leaf-r0-01:2"},
	}}
	return rep, api.CablingSource{Sweep: sweep, Workers: 2, Neighbors: 2, SwitchTables: "not read"}, true
}

func TestCablingAPI(t *testing.T) {
	f := &cablingFake{fakeBackend: newFake()}
	h := New(f, Options{}).Handler()

	rec := do(t, h, "GET", "/api/v1/cabling", "")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var ans struct {
		Ports  []cabling.Finding `json:"ports"`
		Source api.CablingSource `json:"source"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.Ports) != 2 || ans.Ports[0].Verdict != cabling.Swapped || ans.Source.Sweep != "s2" {
		t.Errorf("answer %+v: want both ports and the newest sweep's paths", ans)
	}

	rec = do(t, h, "GET", "/api/v1/cabling?format=csv&sweep=s1&download=1", "")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") ||
		!strings.Contains(rec.Header().Get("Content-Disposition"), "rdmamesh-cabling.csv") {
		t.Fatalf("csv: %d %v", rec.Code, rec.Header())
	}
	if lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "swapped") {
		t.Errorf("csv %q: want the header and the one finding", rec.Body)
	}
	if last := f.asked[len(f.asked)-1]; last != "s1" {
		t.Errorf("asked for sweep %q, want s1", last)
	}

	rec = do(t, h, "GET", "/api/v1/cabling?format=junit", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "<testsuites") {
		t.Errorf("junit: %d %s", rec.Code, rec.Body)
	}

	for q, field := range map[string]string{"format=yaml": "format", "sweep=nope": "sweep"} {
		rec = do(t, h, "GET", "/api/v1/cabling?"+q, "")
		var e api.Error
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code/100 != 4 || e.Field != field {
			t.Errorf("?%s: %d %+v, want a 4xx naming %s", q, rec.Code, e, field)
		}
	}
}

// A backend that cannot judge cabling answers 404, saying so.
func TestCablingAPIWithoutBackend(t *testing.T) {
	rec := do(t, serve(t, newFake()), "GET", "/api/v1/cabling", "")
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), "cabling") {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}

// Reads need the token like every other /api/v1 read.
func TestCablingAPIAuth(t *testing.T) {
	h := New(&cablingFake{fakeBackend: newFake()}, Options{Token: "s3cret"}).Handler()
	if rec := do(t, h, "GET", "/api/v1/cabling", ""); rec.Code != 401 {
		t.Errorf("without the token: %d", rec.Code)
	}
	if rec := do(t, h, "GET", "/api/v1/cabling", "", "Authorization", "Bearer s3cret"); rec.Code != 200 {
		t.Errorf("with the token: %d", rec.Code)
	}
}

// switchFake judges with the posted tables: the report carries them
// back so the test sees what reached the backend.
type switchFake struct {
	*cablingFake
	got []cabling.SwitchPort
}

func (f *switchFake) CablingWithSwitches(sweep string, sws []cabling.SwitchPort) (*cabling.Report, api.CablingSource, bool) {
	f.got = sws
	rep, src, ok := f.Cabling(sweep)
	src.SwitchTables = "read"
	return rep, src, ok
}

// POST answers as GET (format, sweep) with the tables handed over, and
// refuses a body it cannot place, naming the field.
func TestCablingPost(t *testing.T) {
	f := &switchFake{cablingFake: &cablingFake{fakeBackend: newFake()}}
	h := New(f, Options{}).Handler()
	body := `{"switches": [{"switch": "leaf-r0-00", "port": "swp49", "neighbor": {"system_name": "spine-r0-00", "port_id": "swp9", "port_id_type": "interface-name"}}]}`
	rec := do(t, h, "POST", "/api/v1/cabling?format=csv&sweep=s1", body)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "swapped") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if len(f.got) != 1 || f.got[0].Neighbor.PortID != "swp9" || f.asked[len(f.asked)-1] != "s1" {
		t.Errorf("the backend got %+v for sweep %v", f.got, f.asked)
	}
	for body, field := range map[string]string{
		`not json`:         "switches",
		`{"switches": []}`: "switches",
		`{"tables": []}`:   "switches",
		`{"switches": [{"port": "swp1", "neighbor": {"system_name": "s"}}]}`:         "switches[0].switch",
		`{"switches": [{"switch": "l", "neighbor": {"system_name": "s"}}]}`:          "switches[0].port",
		`{"switches": [{"switch": "l", "port": "swp1", "neighbor": {}}]}`:            "switches[0].neighbor",
		`{"switches": [{"switch": "l", "port": "1", "neighbor": {"port_id": "2"}}]}`: "sweep",
	} {
		path := "/api/v1/cabling"
		if field == "sweep" {
			path += "?sweep=nope"
		}
		rec := do(t, h, "POST", path, body)
		var e api.Error
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code/100 != 4 || e.Field != field {
			t.Errorf("%s: %d %+v, want a 4xx naming %s", body, rec.Code, e, field)
		}
	}
	if rec := do(t, New(f.cablingFake, Options{}).Handler(), "POST", "/api/v1/cabling", body); rec.Code != 404 {
		t.Errorf("a backend without switch tables: %d", rec.Code)
	}
	if rec := do(t, New(f, Options{Token: "s3cret", OpenReads: true}).Handler(), "POST", "/api/v1/cabling", body); rec.Code != 401 {
		t.Errorf("POST with open reads but no token: %d, want 401", rec.Code)
	}
}
