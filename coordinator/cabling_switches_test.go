package coordinator

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/topology"
	"github.com/rdmamesh/rdmamesh/web"
)

// cablingServer is the coordinator's API over topo's plan, every HCA's
// worker reporting its planned neighbour.
func cablingServer(t *testing.T, topo *topology.Topology, token string) *httptest.Server {
	t.Helper()
	c := &Coordinator{fsm: store.New(5, nil), reg: newRegistry(), opts: Options{Topology: topo}, topo: newConfiguredTopology(topo)}
	for _, n := range members(t, topo, [2]string{}) {
		c.reg.nodes[n.Name] = &regNode{NodeInfo: n}
	}
	srv := httptest.NewServer(web.New(c, web.Options{Token: token}).Handler())
	t.Cleanup(srv.Close)
	return srv
}

// leafTables is what the leaves' own LLDP tables say of the plan's
// cables between switches, ports written as Cumulus does (swp5): the
// spines' tables are not given, as when only the leaves were read.
func leafTables(topo *topology.Topology) []cabling.SwitchPort {
	obs := cabling.Observe(topo, func(_ topology.Switch, port int) string { return "swp" + strconv.Itoa(port) })
	var out []cabling.SwitchPort
	for _, sp := range obs.Switches {
		if s, _ := topo.Switch(sp.Switch); topo.Switches[s].Tier == topology.Leaf {
			out = append(out, sp)
		}
	}
	return out
}

// askCabling is GET /api/v1/cabling (sws nil) or POST with sws as the
// tables, and the answer when it is 200.
func askCabling(t *testing.T, url, token string, sws []cabling.SwitchPort) (int, web.CablingAnswer) {
	t.Helper()
	method, body := http.MethodGet, []byte(nil)
	if sws != nil {
		method, body = http.MethodPost, mustJSON(t, web.CablingRequest{Switches: sws})
	}
	req, _ := http.NewRequest(method, url+"/api/v1/cabling", bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ans := web.CablingAnswer{Report: &cabling.Report{}}
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, ans
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verdictOf is the verdict of the cable whose lower end is leaf:port.
func verdictOf(t *testing.T, rep *cabling.Report, end string) cabling.Finding {
	t.Helper()
	for _, f := range rep.Ports {
		if f.End == end {
			return f
		}
	}
	t.Fatalf("no port %s in the report", end)
	return cabling.Finding{}
}

// A leaf whose table hears the spine on port 9 where the plan has
// another port is wrong-port; a planned uplink its table lacks is
// missing; every other cable between switches is ok by the leaves'
// tables, where without them all were no-evidence. POST wants the token.
func TestCablingWithSwitchTables(t *testing.T) {
	_, topo, err := topology.GenerateFatTree("nodes=4,rails=1,leaf=2,spines=2,addrs=10.255.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	srv := cablingServer(t, topo, "s3cret")
	tables := leafTables(topo)
	if len(tables) < 4 {
		t.Fatalf("the plan has %d uplinks; the test wants two leaves with two each", len(tables))
	}
	if code, _ := askCabling(t, srv.URL, "", tables); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}

	code, ans := askCabling(t, srv.URL, "s3cret", tables)
	if code != http.StatusOK || ans.Source.SwitchTables != "read: 4 entries from 2 switches, given with the request" {
		t.Fatalf("%d, source %+v", code, ans.Source)
	}
	if n := ans.Counts[cabling.OK]; n != len(ans.Ports) {
		t.Errorf("as planned: %v, want every port ok", ans.Counts)
	}

	moved := append([]cabling.SwitchPort(nil), tables...)
	planned := moved[0].Neighbor.PortID
	moved[0].Neighbor.PortID = "swp9"
	_, ans = askCabling(t, srv.URL, "s3cret", moved)
	end := moved[0].Switch + ":" + moved[0].Port[len("swp"):]
	if f := verdictOf(t, ans.Report, end); f.Verdict != cabling.WrongPort || f.Found != moved[0].Neighbor.SystemName+":9" {
		t.Errorf("uplink heard on the spine's port 9, planned %s: %+v", planned, f)
	}

	_, ans = askCabling(t, srv.URL, "s3cret", tables[1:])
	if f := verdictOf(t, ans.Report, end); f.Verdict != cabling.Missing {
		t.Errorf("an uplink the leaf's table lacks: %+v", f)
	}

	// GET is untouched by what was posted: the cables between switches
	// stay without evidence.
	_, ans = askCabling(t, srv.URL, "s3cret", nil)
	if f := verdictOf(t, ans.Report, end); f.Verdict != cabling.NoEvidence {
		t.Errorf("GET after the POSTs: %+v, want no-evidence", f)
	}
}
