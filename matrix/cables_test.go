package matrix

import (
	"bytes"
	"encoding/csv"
	"reflect"
	"testing"
)

func TestWriteCables(t *testing.T) {
	m := &Matrix{Suspects: []Suspect{
		{Kind: KindHCA, Node: "node-01"},
		{Kind: KindLink, Ends: []string{"leaf-r0-05:33", "spine-r0-02:5"}, Verdict: VerdictLowBandwidth, HardFailures: 2,
			Bad: 41, Total: 44, BgBad: 3, BgTotal: 1980, Confidence: 0.93, Fix: "reseat"},
		{Kind: KindCable, Node: "node-03", Ends: []string{"node-03/mlx5_1", "leaf-r1-00:3"}, Direction: "egress",
			Verdict: VerdictFailed, Bad: 10, Total: 10, Confidence: 1, Fix: "replace"},
		{Kind: KindSwitch, Switch: "spine-r0-02", Verdict: VerdictSlowLatency, Bad: 100, Total: 400, Confidence: 0.8, Fix: "drain"},
	}}
	var b bytes.Buffer
	if err := m.WriteCables(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"switch", "port", "peer", "peer_port", "problem", "direction", "evidence", "confidence", "action"},
		{"leaf-r0-05", "33", "spine-r0-02", "5", "drops packets: low bandwidth and some failed tests", "", "41 of about 44 tests through it bad; 3 of about 1980 elsewhere", "0.93", "reseat"},
		{"leaf-r1-00", "3", "node-03/mlx5_1", "1", "down: every test through it failed", "from the HCA", "10 of about 10 tests through it bad; 0 of about 0 elsewhere", "1.00", "replace"},
		{"spine-r0-02", "", "", "", "high latency", "", "100 of about 400 tests through it bad; 0 of about 0 elsewhere", "0.80", "drain"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("got\n%q\nwant\n%q", rows, want)
	}
}
