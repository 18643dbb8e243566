package cabling

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/junit"
)

// A report with a swap, a silent port and an unplanned HCA, in every form.
func outputReport(t *testing.T) *Report {
	t.Helper()
	topo := smallTree(t)
	obs := Observe(topo, swp)
	host(t, &obs, "node-01", 0).Neighbor = nbr("leaf-r1-00", "swp1")
	host(t, &obs, "node-01", 1).Neighbor = nbr("leaf-r0-00", "swp1")
	h := host(t, &obs, "node-04", 0)
	h.Neighbor, h.Why = nil, "no LLDP frame in 60 s"
	obs.Hosts = append(obs.Hosts, HostPort{Node: "node-99", Device: "mlx5_0", Neighbor: nbr("leaf-r0-00", "swp12")})
	return Check(topo, obs)
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := outputReport(t).WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		CSVHeader,
		{"node-01/mlx5_0", "node-01", "mlx5_0", "0", "leaf-r0-00:1", "leaf-r1-00:1", "swapped", "node-01/mlx5_1", "host-lldp"},
		{"node-01/mlx5_1", "node-01", "mlx5_1", "1", "leaf-r1-00:1", "leaf-r0-00:1", "swapped", "node-01/mlx5_0", "host-lldp"},
		{"node-99/mlx5_0", "node-99", "mlx5_0", "0", "", "leaf-r0-00:12", "unexpected", "", "host-lldp"},
		{"node-04/mlx5_0", "node-04", "mlx5_0", "0", "leaf-r0-00:4", "", "no-evidence", "", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %q", len(rows), len(want), rows)
	}
	for i, w := range want {
		if got := rows[i][:len(w)]; strings.Join(got, ",") != strings.Join(w, ",") {
			t.Errorf("row %d: %q, want %q", i, got, w)
		}
	}
	if !strings.Contains(rows[4][10], "no LLDP frame in 60 s") {
		t.Errorf("the worker's reason is lost: %q", rows[4][10])
	}
}

func TestWriteJSON(t *testing.T) {
	r := outputReport(t)
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Ports) != len(r.Ports) || back.Counts[Swapped] != 2 || back.Counts[OK] != r.Counts[OK] || !back.Planned {
		t.Errorf("read back %d ports, counts %v; wrote %d, %v", len(back.Ports), back.Counts, len(r.Ports), r.Counts)
	}
}

// One case a node: node-01 fails, node-04 is skipped (no evidence is
// never a pass), node-99 fails as unexpected, the rest pass.
func TestWriteJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := outputReport(t).WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var doc junit.Suites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suites[0]
	// 9 nodes and the 4 leaves that are near ends of uplinks.
	if s.Tests != 13 || s.Failures != 2 || s.Skipped != 1 {
		t.Fatalf("tests %d, failures %d, skipped %d; want 13, 2, 1", s.Tests, s.Failures, s.Skipped)
	}
	for _, c := range s.Cases {
		failed, skipped := c.Failure != nil, c.Skipped != nil
		if failed != (c.Name == "node-01" || c.Name == "node-99") || skipped != (c.Name == "node-04") {
			t.Errorf("case %s: failed %v, skipped %v", c.Name, failed, skipped)
		}
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := outputReport(t).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"cabling against the plan: 33 ports, 4 findings (2 swapped, 1 unexpected, 1 no-evidence, 29 ok)",
		"swap the cables of node-01/mlx5_0 and node-01/mlx5_1",
		"leaf-r1-00:1 (with node-01/mlx5_1)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
