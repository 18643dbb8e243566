package cluster

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/gate"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// Two rails, two leaves a plane: node-03's HCAs are on different
// planes, so swapping their cables is both swapped and, each alone,
// wrong-rail.
const cablingTree = "nodes=8,rails=2,leaf=4,spines=2,oversub=2,addrs=10.255.0.0/24"

// startCabled is a traced cluster on cablingTree whose switches announce
// themselves over LLDP, with swapped's cables exchanged.
func startCabled(t *testing.T, swapped ...[2]string) *Cluster {
	t.Helper()
	return startOn(t, cablingTree, Options{Rails: 2, SwappedCables: swapped})
}

// getCabling reads GET /api/v1/cabling as a client would.
func getCabling(t *testing.T, cl *Cluster, query string) ([]byte, string) {
	t.Helper()
	res, err := http.Get(cl.URL + "/api/v1/cabling" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/cabling%s: %s %v: %s", query, res.Status, err, b)
	}
	return b, res.Header.Get("Content-Type")
}

type cablingJSON struct {
	Planned bool                    `json:"planned"`
	Ports   []cabling.Finding       `json:"ports"`
	Counts  map[cabling.Verdict]int `json:"counts"`
	Source  api.CablingSource       `json:"source"`
}

func runGate(t *testing.T, cl *Cluster, o gate.Options) (int, string) {
	t.Helper()
	o.Coordinator, o.Request = cl.URL, api.SweepRequest{Mode: "quick"}
	var out, errOut bytes.Buffer
	code := gate.Run(t.Context(), o, &out, &errOut)
	return code, out.String() + errOut.String()
}

// Cabled as planned: the gate passes, and every HCA port is ok, its
// switch port heard over LLDP and its leaf confirmed by the sweep's
// traced paths; the cables between switches, whose tables nobody reads,
// are ok where a traced path crossed them, else no-evidence.
func TestCablingCleanFabric(t *testing.T) {
	cl := startCabled(t)
	code, out := runGate(t, cl, gate.Options{})
	if code != gate.ExitHealthy || !strings.Contains(out, "cabling against the plan") {
		t.Fatalf("gate exit %d:\n%s", code, out)
	}
	b, _ := getCabling(t, cl, "")
	var rep cablingJSON
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	hcas, confirmed, crossed := 0, 0, 0
	for _, f := range rep.Ports {
		switch {
		case f.Node == "" && f.Verdict == cabling.OK:
			crossed++
		case f.Node == "" && f.Verdict != cabling.NoEvidence:
			t.Errorf("switch cable %s: %s, want ok (a path crossed it) or no-evidence", f.End, f.Verdict)
		case f.Node != "" && f.Verdict != cabling.OK:
			t.Errorf("%s: %s (%s)", f.End, f.Verdict, f.Detail)
		case f.Node != "":
			hcas++
			if f.Evidence == cabling.EvidenceHost+"+"+cabling.EvidencePath {
				confirmed++
			}
		}
	}
	s := rep.Source
	if !rep.Planned || hcas != 16 || s.Workers != 8 || s.Neighbors != 16 || s.Sweep == "" || s.Paths == 0 || s.Plan == "" {
		t.Fatalf("%d HCA ports ok, source %+v: want 16 from 8 workers' LLDP and the sweep's paths", hcas, s)
	}
	if confirmed == 0 || crossed == 0 {
		t.Errorf("%d HCAs' leaves and %d cables between switches confirmed by traced paths, want some of each", confirmed, crossed)
	}
}

// node-03's two HCAs have each other's cables: the API names both
// swapped, with the other and the action, in JSON and in the
// technician's CSV; the gate fails with its cabling code, or passes with
// a warning under --cabling=warn.
func TestCablingSwappedHCAs(t *testing.T) {
	cl := startCabled(t, [2]string{"node-03/mlx5_0", "node-03/mlx5_1"})
	code, out := runGate(t, cl, gate.Options{})
	if code != gate.ExitCabling || !strings.Contains(out, "swapped node-03/mlx5_0") {
		t.Fatalf("gate exit %d, want %d:\n%s", code, gate.ExitCabling, out)
	}
	b, _ := getCabling(t, cl, "")
	var rep cablingJSON
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"node-03/mlx5_0": "node-03/mlx5_1", "node-03/mlx5_1": "node-03/mlx5_0"}
	for _, f := range rep.Ports {
		if with, swapped := want[f.End]; swapped {
			if f.Verdict != cabling.Swapped || f.With != with || !strings.Contains(f.Action, "swap the cables") {
				t.Errorf("%s: %+v, want swapped with %s", f.End, f, with)
			}
			delete(want, f.End)
		} else if f.Node != "" && f.Verdict != cabling.OK {
			t.Errorf("%s: %s, want ok", f.End, f.Verdict)
		}
	}
	if len(want) > 0 {
		t.Errorf("not reported: %v", want)
	}
	csv, ctype := getCabling(t, cl, "?format=csv")
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if !strings.HasPrefix(ctype, "text/csv") || !strings.HasPrefix(lines[0], "end,node,hca,rail,expected,found,verdict") ||
		!strings.HasPrefix(lines[1], "node-03/mlx5_0,node-03,mlx5_0,0,") || !strings.Contains(lines[1], ",swapped,node-03/mlx5_1,") {
		t.Errorf("CSV (%s):\n%s", ctype, csv)
	}
	if code, out := runGate(t, cl, gate.Options{Cabling: gate.CablingWarn}); code != gate.ExitHealthy || !strings.Contains(out, "warning: 2 ports") {
		t.Errorf("--cabling=warn: exit %d:\n%s", code, out)
	}
}
