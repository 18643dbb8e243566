package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/matrix"
)

func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runContext(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestDemoNamesTheCable: the demo on a generated fat tree with a lossy
// or dead spine link, or a dead spine, exits 1 and names that part first
// (retests over other paths must not hide the lossy link).
func TestDemoNamesTheCable(t *testing.T) {
	for _, tc := range []struct {
		fault, kind, name string
	}{
		{"cable=leaf-r0-01:11~spine-r0-01:3:loss=2%", matrix.KindLink, "leaf-r0-01:11 spine-r0-01:3"},
		{"cable=leaf-r1-02:13~spine-r1-02:5:down", matrix.KindLink, "leaf-r1-02:13 spine-r1-02:5"},
		{"switch=spine-r0-03:down", matrix.KindSwitch, "spine-r0-03"},
	} {
		js := filepath.Join(t.TempDir(), "m.json")
		code, out, errOut := runArgs(t, "demo", "--fat-tree", "nodes=32,rails=2,leaf=8,spines=4", "--once", "--listen", "127.0.0.1:0",
			"--time-scale", "0", "--fault", tc.fault, "--json", js)
		if code != 1 {
			t.Fatalf("%s: exit %d, want 1\n%s\n%s", tc.fault, code, out, errOut)
		}
		raw, err := os.ReadFile(js)
		if err != nil {
			t.Fatal(err)
		}
		var m matrix.Matrix
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if len(m.Suspects) == 0 {
			t.Fatalf("%s: no suspect\n%s", tc.fault, out)
		}
		s := m.Suspects[0]
		name := s.Switch
		if len(s.Ends) == 2 {
			name = s.Ends[0] + " " + s.Ends[1]
			if s.Ends[0] > s.Ends[1] {
				name = s.Ends[1] + " " + s.Ends[0]
			}
		}
		if s.Kind != tc.kind || name != tc.name || s.Direction != "" {
			t.Errorf("%s: first suspect %s %q (direction %q), want %s %q\n%s", tc.fault, s.Kind, name, s.Direction, tc.kind, tc.name, out)
		}
	}
}

func TestTopologyBadInput(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(plan, []byte("cables:\n  - {a: node-01/mlx5_0, b: leaf-0:1}\n  - {a: node-02/mlx5_0, b: leaf-0:1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--fat-tree", "nodes=16,rails=2,leaf=4,spines=3", "--once"}, "do not spread evenly over 3 spines"},
		{[]string{"demo", "--fat-tree", "nodes=16,rails=2,leaf=4,spines=2", "--once", "--listen", "127.0.0.1:0",
			"--fault", "cable=leaf-r0-00:9~spine-r0-00:1:down"}, "no cable from leaf-r0-00:9"},
		{[]string{"demo", "--fat-tree", "nodes=16,rails=2,leaf=4,spines=2", "--nodes", "8", "--once"}, "--nodes 8 disagrees"},
		{[]string{"demo", "--topology", plan, "--once"}, "plan.yaml:3"},
		{[]string{"demo", "--once", "--fault", "switch=spine-r0-00:down", "--listen", "127.0.0.1:0"}, "need a topology"},
		{[]string{"topology", "generate", "--fat-tree", "nodes=1"}, "nodes: 1"},
	} {
		code, out, errOut := runArgs(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 2 with %q\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}
}

func TestTopologyGenerate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plan.yaml")
	code, _, errOut := runArgs(t, "topology", "generate", "--fat-tree", "nodes=16,rails=2,leaf=4,spines=2", "-o", out)
	if code != 0 || !strings.Contains(errOut, "12 switches, 32 HCAs, 64 cables") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, stdout, errOut := runArgs(t, "demo", "--topology", out, "--nodes", "16", "--once", "--listen", "127.0.0.1:0", "--time-scale", "0")
	if code != 0 {
		t.Fatalf("a demo on the generated plan: exit %d\n%s%s", code, stdout, errOut)
	}
}
