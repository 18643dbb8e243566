package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// spineTable is what a leaf's lldpcli -f json says of its one uplink.
const spineTable = `{"lldp": {"interface": {"swp49": {"via": "LLDP", "chassis": {"spine-01": {"id": {"type": "mac", "value": "1c:34:da:aa:00:01"}}},
  "port": {"id": {"type": "ifname", "value": "swp9"}, "descr": "to leaf05"}}}}}`

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Each --switch-lldp value the command cannot place stops it with exit
// 2, naming the flag, the file and the fix, before asking anyone.
func TestCablingSwitchLLDPErrors(t *testing.T) {
	srv := cablingServer(t, "", cabling.OK)
	dir := t.TempDir()
	unnamed := writeFile(t, dir, "unnamed.json", spineTable)
	text := writeFile(t, dir, "leaf05.txt", "-------\nLLDP neighbors:\n-------\nInterface: swp49, via: LLDP\n")
	chassis := writeFile(t, dir, "leaf06.json", `{"local-chassis": {"chassis": {"leaf06": {"id": {"type": "mac", "value": "x"}}}}}`+"\n"+spineTable)
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ spec, says string }{
		"missing file":   {filepath.Join(dir, "nope.json"), "--switch-lldp " + filepath.Join(dir, "nope.json") + ": "},
		"unknown format": {text, "not lldpcli's output (neither JSON nor keyvalue)"},
		"NAME= no file":  {"leaf05=", `"leaf05=": no file after '=': give NAME=FILE, e.g. leaf05=leaf05.json`},
		"=FILE no name":  {"=" + unnamed, "no switch before '='"},
		"whose table":    {unnamed, "does not say whose table it is (no local-chassis): give --switch-lldp NAME=" + unnamed},
		"other switch":   {"leaf05=" + chassis, "the file is leaf06's table (local-chassis), not leaf05"},
		"NAME=dir":       {"leaf05=" + dir, "is a directory of many switches' tables"},
		"empty dir":      {filepath.Join(dir, "empty"), "the directory holds no file"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out := cablingCLI("--coordinator", srv.URL, "--switch-lldp", tc.spec)
			if code != 2 || !strings.Contains(out, tc.says) {
				t.Fatalf("exit %d, want 2; output lacks %q:\n%s", code, tc.says, out)
			}
		})
	}
	code, out := cablingCLI("--coordinator", srv.URL, "--switch-lldp", chassis, "--switch-lldp", "leaf06="+unnamed)
	if code != 2 || !strings.Contains(out, "leaf06's table was already read from "+chassis) {
		t.Errorf("one switch twice: exit %d: %s", code, out)
	}
}

// The tables reach the coordinator as POST /api/v1/cabling's body, each
// switch named by NAME=, by its file's local-chassis, or in a directory
// by the file's name; a management port's neighbour is left out.
func TestCablingSwitchLLDPPosts(t *testing.T) {
	var got []cabling.SwitchPort
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Switches []cabling.SwitchPort `json:"switches"`
		}
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/cabling" || r.URL.Query().Get("sweep") != "s1" {
			t.Errorf("%s %s, want POST /api/v1/cabling?sweep=s1", r.Method, r.URL)
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		got = req.Switches
		_ = json.NewEncoder(w).Encode(struct {
			cabling.Report
			Source api.CablingSource `json:"source"`
		}{Report: cabling.Report{Planned: true, Counts: map[cabling.Verdict]int{}}})
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tables := filepath.Join(dir, "tables")
	if err := os.Mkdir(tables, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, tables, "leaf07.json", spineTable)
	writeFile(t, tables, ".leaf07.json.swp", "editor junk")
	writeFile(t, tables, "leaf08.json", `{"local-chassis": {"chassis": {"leaf-08.dc1": {}}}}`+spineTable)
	named := writeFile(t, dir, "x.json", `{"lldp": {"interface": [{"eth0": {"chassis": {"oob-mgmt": {}}, "port": {"id": {"type": "ifname", "value": "swp5"}}}}, `+
		strings.TrimSuffix(strings.TrimPrefix(spineTable, `{"lldp": {"interface": `), "}}")+`]}}`)
	quiet := writeFile(t, dir, "quiet.json", `{"lldp": {}}`)

	code, out := cablingCLI("--coordinator", srv.URL, "--sweep", "s1", "--switch-lldp", tables, "--switch-lldp", "leaf05="+named,
		"--switch-lldp", "leaf09="+quiet)
	if code != 0 || !strings.Contains(out, "note: leaf09 ("+quiet+") hears no neighbour") ||
		!strings.Contains(out, "note: leaf05's eth0 is its management port, not a fabric cable: left out") {
		t.Fatalf("exit %d: %s", code, out)
	}
	want := []string{"leaf07", "leaf-08.dc1", "leaf05"}
	if len(got) != len(want) {
		t.Fatalf("posted %+v, want one entry from each of %v", got, want)
	}
	for i, sp := range got {
		if sp.Switch != want[i] || sp.Port != "swp49" || sp.Neighbor.SystemName != "spine-01" || sp.Neighbor.PortID != "swp9" ||
			sp.Neighbor.PortIDType != "interface-name" || sp.Neighbor.PortDescription != "to leaf05" || sp.Neighbor.ChassisID != "1c:34:da:aa:00:01" {
			t.Errorf("entry %d: %+v, want %s's swp49 hearing spine-01 swp9", i, sp, want[i])
		}
	}
}
