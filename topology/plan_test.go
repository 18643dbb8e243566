package topology

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestExamplePlan(t *testing.T) {
	topo, err := LoadPlan("../configs/topology/cabling.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if topo.LinkLayer != RoCE || len(topo.Switches) != 8 || len(topo.HCAs) != 16 || len(topo.Cables) != 32 ||
		topo.Leaves() != 4 || topo.MaxTier() != Spine {
		t.Fatalf("%s: %d switches, %d HCAs, %d cables, %d leaves, %d tiers; want 8, 16, 32, 4, 2",
			topo.LinkLayer, len(topo.Switches), len(topo.HCAs), len(topo.Cables), topo.Leaves(), topo.MaxTier())
	}
	for _, want := range []Switch{
		{Name: "leaf-r0-00", Tier: Leaf, Plane: 0},
		{Name: "leaf-r1-01", Tier: Leaf, Plane: 1},   // plane from its HCAs' rail
		{Name: "spine-r1-00", Tier: Spine, Plane: 1}, // tier derived, plane given
	} {
		i, ok := topo.Switch(want.Name)
		if !ok {
			t.Fatalf("no switch %s", want.Name)
		}
		if got := topo.Switches[i]; !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	}
	h, ok := topo.HCA("node-06", 1)
	if !ok || topo.HCAs[h].Device != "mlx5_1" || topo.Switches[topo.LeafOf(h)].Name != "leaf-r1-01" {
		t.Fatalf("node-06 rail 1: %v %+v", ok, topo.HCAs[h])
	}
	if c := topo.Cables[topo.HCACable(h)]; c.Speed != "400G" || topo.EndName(c.B) != "leaf-r1-01:2" {
		t.Errorf("node-06 rail 1 cable %s, speed %q", topo.CableName(topo.HCACable(h)), c.Speed)
	}
	// Every leaf reaches both spines of its plane over 2 cables each.
	for s := range topo.Switches {
		if topo.Switches[s].Tier == Leaf && len(topo.Uplinks(s)) != 4 {
			t.Errorf("%s has %d uplinks, want 4", topo.Switches[s].Name, len(topo.Uplinks(s)))
		}
	}
}

func TestPlanEndForms(t *testing.T) {
	const yml = `link_layer: ib
switches:
  - name: core-0
    tier: core
    pod: 0
cables:
  - a: node-01/mlx5_4 rail 0
    b: leaf-0:1
  - {a: node-01 rail 1, b: leaf-0:2}
  - {a: node-02/hca7, b: leaf-0:3}
  - {a: leaf-0:9, b: core-0:1}
`
	const csvPlan = "# rail-0 leaf\nspeed,b,a\n400G,leaf-0:1,node-01/mlx5_4 rail 0\n,leaf-0:2,node-01 rail 1\n\n200G, leaf-0:3 , node-02/hca7\n,core-0:1,leaf-0:9\n"
	for name, data := range map[string]string{"plan.yaml": yml, "plan.CSV": csvPlan} {
		topo, err := ParsePlan(name, []byte(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, want := range []HCA{{Node: "node-01", Device: "mlx5_4", Rail: 0}, {Node: "node-01", Rail: 1}, {Node: "node-02", Device: "hca7", Rail: 7}} {
			if h, ok := topo.HCA(want.Node, want.Rail); !ok || topo.HCAs[h] != want {
				t.Errorf("%s: want HCA %+v, have %+v", name, want, topo.HCAs)
			}
		}
		core, _ := topo.Switch("core-0")
		if topo.Switches[core].Tier != Core && name == "plan.yaml" {
			t.Errorf("%s: core-0 is %s, the plan says core", name, topo.Switches[core].Tier)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	// Each case's error must hold every one of want.
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"plan.yaml", "", []string{"plan.yaml: the file is empty"}},
		{"plan.yaml", "# nothing yet\n", []string{"plan.yaml: the file is empty"}},
		{"plan.yaml", "cables:\n  - {a: node-01/mlx5_0, b: leaf-0:1}\n  - {a: node-02/mlx5_0, b: leaf-0",
			// yaml.v3 places a flow collection's error a line early.
			[]string{"plan.yaml:", ": YAML syntax: did not find expected ',' or '}' (on this line or one after it)"}},
		{"plan.yaml", "link_layer: roce\ncable:\n  - {a: n/mlx5_0, b: l:1}\n",
			[]string{"plan.yaml:2: ", `unknown key "cable"`, "allowed: link_layer, switches, cables"}},
		{"plan.yaml", "cables:\n  - {a: n/mlx5_0, b: l:1, sped: 400G}\n",
			[]string{"plan.yaml:2: cable 1: ", `unknown key "sped"`, "allowed: a, b, speed"}},
		{"plan.yaml", "switches:\n  - {name: l, teir: leaf}\ncables:\n  - {a: n/mlx5_0, b: l:1}\n",
			[]string{"plan.yaml:2: switch 1: ", `unknown key "teir"`, "allowed: name, tier, plane, pod"}},
		{"plan.yaml", "link_layer: eth\ncables:\n  - {a: n/mlx5_0, b: l:1}\n",
			[]string{"plan.yaml:1: link_layer: ", "write roce or ib"}},
		{"plan.yaml", "cables: []\n", []string{"plan.yaml:1: cables: no cables"}},
		{"plan.yaml", "cables:\n  - {a: n/mlx5_0}\n", []string{"plan.yaml:2: cable 1: no b"}},
		{"plan.yaml", "cables:\n  - {a: n/mlx5_0, b: l:1, a: m/mlx5_0}\n", []string{"plan.yaml:2: cable 1: a is given twice"}},
		{"plan.yaml", "cables:\n  - {a: n/mlx5_0, b: [l, 1]}\n", []string{"plan.yaml:2: cable 1, field b: want a single value"}},
		// A switch listed for its tier but never cabled.
		{"plan.yaml", "switches:\n  - {name: spine-9, tier: spine}\ncables:\n  - {a: n/mlx5_0, b: leaf-0:1}\n",
			[]string{"plan.yaml:2: switches: switch spine-9 has no cable"}},
		{"plan.yaml", "switches:\n  - {name: spine-0, tier: aggregation}\ncables:\n  - {a: leaf-0:9, b: spine-0:1}\n",
			[]string{"plan.yaml:2: switch 1, field tier: ", `"aggregation" is no tier`, "write leaf, spine or core"}},
		{"plan.yaml", "switches:\n  - {name: s, plane: x}\ncables:\n  - {a: n/mlx5_0, b: s:1}\n",
			[]string{"plan.yaml:2: switch 1, field plane: "}},
		{"plan.yaml", "switches:\n  - {name: s}\n  - {name: s}\ncables:\n  - {a: n/mlx5_0, b: s:1}\n",
			[]string{"plan.yaml:3: switches: switch s is listed twice (also on line 2)"}},
		// One port in two cables: both lines named.
		{"plan.yaml", "cables:\n  - {a: node-01/mlx5_0, b: leaf-0:1}\n  - {a: node-02/mlx5_0, b: leaf-0:2}\n  - {a: node-03/mlx5_0, b: leaf-0:1}\n",
			[]string{"plan.yaml:4: cable 3, field b: leaf-0:1 is already in cable 1 on line 2"}},
		{"plan.yaml", "cables:\n  - {a: node-01/mlx5_0, b: leaf-0:1}\n  - {a: node-01 rail 0, b: leaf-0:2}\n",
			[]string{"plan.yaml:3: cable 2, field a: node-01/mlx5_0 (rail 0) is already in cable 1 on line 2"}},
		{"plan.yaml", "cables:\n  - {a: node-01/mlx5_0, b: leaf-0:1}\n  - {a: node-02/mlx5_0, b: leaf-0:2}\n  - {a: leaf-0:3,\n     b: leaf-0:3}\n",
			[]string{"plan.yaml:5: cable 3, field b: leaf-0:3 is also end a"}},
		// Cables to itself and between HCAs are New's findings, placed on their line.
		{"plan.yaml", "cables:\n  - {a: node-01/mlx5_0, b: leaf-0:1}\n  - {a: leaf-0:2,\n     b: leaf-0:3}\n",
			[]string{"plan.yaml:4: cable 2, field b: joins switch leaf-0 to itself"}},
		{"plan.yaml", "cables:\n  - {a: node-01/mlx5_0, b: node-02/mlx5_0}\n",
			[]string{"plan.yaml:2: cable 1, field b: joins two HCAs", "put a switch between them"}},
		// Bad ends.
		{"plan.yaml", "cables:\n  - {a: node-01/mlx5_0, b: leaf-0:0}\n", []string{`plan.yaml:2: cable 1, field b: "leaf-0:0": port "0" is not a whole number from 1 (write leaf-0:PORT`}},
		{"plan.yaml", "cables:\n  - {a: node-01/mlx5_0, b: leaf-0:x1}\n", []string{`field b: "leaf-0:x1": port "x1" is not`}},
		{"plan.yaml", "cables:\n  - {a: node-01/mlx5_0, b: leaf-0:1}\n  - {a: node-02/mlx5_0, b: leaf-0}\n",
			[]string{`plan.yaml:3: cable 2, field b: "leaf-0" has no port (write leaf-0:PORT)`}},
		{"plan.yaml", "cables:\n  - {a: node-01, b: leaf-0:1}\n", []string{`field a: "node-01" is no end; write SWITCH:PORT, NODE/DEVICE`}},
		{"plan.yaml", "cables:\n  - {a: node-01/eth, b: leaf-0:1}\n", []string{`device "eth" has no trailing number`, "write node-01/eth rail N"}},
		{"plan.yaml", "cables:\n  - {a: node-01/mlx5_0:1, b: leaf-0:1}\n", []string{"an HCA end takes no port (write node-01/mlx5_0;"}},
		{"plan.yaml", "cables:\n  - {a: node-01 rail x, b: leaf-0:1}\n", []string{`rail "x" is not a whole number from 0`}},
		{"plan.yaml", "cables:\n  - {a: n/mlx5_0, b: l:1}\n  - {a: n/mlx5_0 rail 1, b: l:2}\n", []string{"plan.yaml:3: cable 2, field a:", "n/mlx5_0 is rail 0 in an earlier cable"}},
		{"plan.yaml", "cables:\n  - {a: n/mlx5_0, b: l:1}\n  - {a: n/mlx5_8 rail 0, b: l:2}\n", []string{"plan.yaml:3: cable 2, field a:", "rail 0 of n is mlx5_0 in an earlier cable"}},
		{"plan.yaml", "cables:\n  - {a: '', b: l:1}\n", []string{"plan.yaml:2: cable 1, field a: empty"}},
		// CSV.
		{"plan.csv", "", []string{"plan.csv: the file is empty"}},
		{"plan.csv", "# only a comment\n", []string{"plan.csv: the file is empty"}},
		{"plan.csv", "a,b\n", []string{"plan.csv: no cables after the header"}},
		{"plan.csv", "# plan\na,speed\nnode-01/mlx5_0,400G\n", []string{"plan.csv:2: header: no column b"}},
		{"plan.csv", "a,b,colour\nn/mlx5_0,l:1,red\n", []string{`plan.csv:1: header: unknown column "colour" (allowed: a, b and optionally speed)`}},
		{"plan.csv", "a,b,speed\nn/mlx5_0,l:1,400G\nm/mlx5_0,l:2\n", []string{"plan.csv:3: cable 2: 2 columns, but the header names 3"}},
		{"plan.csv", "a,b\nn/mlx5_0,l:1\nm/mlx5_0,\"l:2\n", []string{"plan.csv:3: CSV syntax"}},
		{"plan.csv", "a,b\n# a comment\nn/mlx5_0,l:1\nm/mlx5_0,l:1\n", []string{"plan.csv:4: cable 2, field b: l:1 is already in cable 1 on line 3"}},
		{"plan.csv", "a,b\nn/mlx5_0,l\n", []string{`plan.csv:2: cable 1, field b: "l" is no end`}},
	} {
		topo, err := ParsePlan(tc.name, []byte(tc.data))
		if err == nil || topo != nil {
			t.Errorf("%s %q: no error", tc.name, tc.data)
			continue
		}
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("%s %q: %T is no *FileError", tc.name, tc.data, err)
		} else if wholeFile := strings.HasPrefix(tc.want[0], tc.name+": "); wholeFile != (fe.Line == 0) {
			t.Errorf("%s %q: error %v on line %d", tc.name, tc.data, err, fe.Line)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %q:\n error %v\n want it to say %q", tc.name, tc.data, err, w)
			}
		}
	}
}

func TestPlanNewErrorUnwraps(t *testing.T) {
	_, err := ParsePlan("p.yaml", []byte("cables:\n  - {a: n/mlx5_0, b: m/mlx5_0}\n"))
	var ce *CableError
	if !errors.As(err, &ce) || ce.Index != 0 {
		t.Fatalf("%v does not unwrap to cable 1's CableError", err)
	}
}

func TestLoadPlanMissingFile(t *testing.T) {
	if _, err := LoadPlan("testdata/no-such-plan.yaml"); err == nil || !strings.Contains(err.Error(), "no-such-plan.yaml") {
		t.Fatalf("error %v, want it to name the file", err)
	}
}

func TestPlanLeniencies(t *testing.T) {
	for name, data := range map[string]string{
		"bom.csv":    "\ufeffa,b\nnode-01/mlx5_0,leaf-0:1\n",
		"spaces.csv": "a, b ,speed\n node-01/mlx5_0 , leaf-0:1 , 400G \n",
		"null.yaml":  "switches:\ncables:\n  - a: node-01/mlx5_0\n    b: leaf-0:1\n",
		"ll.yaml":    "link_layer: InfiniBand\ncables:\n  - {a: node-01/mlx5_0, b: leaf-0:1}\n",
	} {
		topo, err := ParsePlan(name, []byte(data))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if topo.CableName(0) != "node-01/mlx5_0 <-> leaf-0:1" {
			t.Errorf("%s: cable %s", name, topo.CableName(0))
		}
	}
}
