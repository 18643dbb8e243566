package sim

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseFaultGood(t *testing.T) {
	cases := []struct {
		spec   string
		nodes  []string
		device string
		want   Effects
	}{
		{"node-03:down", []string{"node-03"}, "", Effects{Down: true}},
		{"node-03:dead", []string{"node-03"}, "", Effects{Dead: true}},
		{"node-03/mlx5_1:loss=30%", []string{"node-03"}, "mlx5_1", Effects{Loss: 0.3}},
		{"node-03:loss=0.5%", []string{"node-03"}, "", Effects{Loss: 0.005}},
		{"node-03:bw=0.4", []string{"node-03"}, "", Effects{BW: 0.4}},
		{"node-03:lat=5x", []string{"node-03"}, "", Effects{Lat: 5}},
		{"node-03:lat=2.5", []string{"node-03"}, "", Effects{Lat: 2.5}},
		{"node-03:tail=20x", []string{"node-03"}, "", Effects{Tail: 20}},
		{"node-03:mtu=1024", []string{"node-03"}, "", Effects{DropAbove: 1024}},
		{"node-03/mlx5_7:gid=wrong", []string{"node-03"}, "mlx5_7", Effects{WrongGID: true}},
		{"node-03:down,lat=2x,bw=0.5", []string{"node-03"}, "", Effects{Down: true, Lat: 2, BW: 0.5}},
		{"  node-03 : loss=5% , tail=3x ", []string{"node-03"}, "", Effects{Loss: 0.05, Tail: 3}},
		{"node-05~node-09:down", []string{"node-05", "node-06", "node-07", "node-08", "node-09"}, "", Effects{Down: true}},
		{"node-8~node-11/mlx5_2:bw=0.5", []string{"node-8", "node-9", "node-10", "node-11"}, "mlx5_2", Effects{BW: 0.5}},
		{"gpu098~gpu101:dead", []string{"gpu098", "gpu099", "gpu100", "gpu101"}, "", Effects{Dead: true}},
		{"n1~n1:down", []string{"n1"}, "", Effects{Down: true}},
		{"host.example-1:down", []string{"host.example-1"}, "", Effects{Down: true}},
		{"node-05:loss=3%@egress", []string{"node-05"}, "", Effects{Egress: OneWay{Loss: 0.03}}},
		{"node-05/mlx5_0:bw=0.2@ingress,loss=1%", []string{"node-05"}, "mlx5_0", Effects{Loss: 0.01, Ingress: OneWay{BW: 0.2}}},
		{"node-05:loss=2%@egress,loss=5%@ingress,bw=0.5@egress", []string{"node-05"}, "",
			Effects{Egress: OneWay{Loss: 0.02, BW: 0.5}, Ingress: OneWay{Loss: 0.05}}},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			f, err := ParseFault(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Nodes(); !reflect.DeepEqual(got, c.nodes) {
				t.Errorf("nodes %v, want %v", got, c.nodes)
			}
			if f.Device != c.device {
				t.Errorf("device %q, want %q", f.Device, c.device)
			}
			if f.Effects != c.want {
				t.Errorf("effects %+v, want %+v", f.Effects, c.want)
			}
			for _, n := range c.nodes {
				if !f.matchesNode(n) {
					t.Errorf("%s does not match its own node %s", c.spec, n)
				}
			}
			back, err := ParseFault(f.String())
			if err != nil || back.String() != f.String() {
				t.Errorf("String %q does not round-trip: %v", f.String(), err)
			}
		})
	}
}

func TestRangeMatching(t *testing.T) {
	f, err := ParseFault("node-05~node-09/mlx5_1:down")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		node, dev string
		want      bool
	}{
		{"node-05", "mlx5_1", true},
		{"node-09", "mlx5_1", true},
		{"node-07", "mlx5_0", false},
		{"node-04", "mlx5_1", false},
		{"node-10", "mlx5_1", false},
		{"node-7", "mlx5_1", false}, // width is part of the name
		{"node-007", "mlx5_1", false},
		{"rack-07", "mlx5_1", false},
		{"node-", "mlx5_1", false},
	}
	for _, c := range cases {
		if got := f.Matches(c.node, c.dev); got != c.want {
			t.Errorf("Matches(%s, %s) = %v, want %v", c.node, c.dev, got, c.want)
		}
	}
	for _, n := range []string{"", "0", "node-01"} {
		if (Fault{}).Matches(n, "mlx5_0") {
			t.Errorf("a zero Fault matches %q", n)
		}
	}
}

func TestParseFaultBad(t *testing.T) {
	cases := []struct {
		spec string
		want string // must appear in the error, naming the bad part
	}{
		{"node-03:lsos=3", `unknown effect "lsos" (want down, dead, loss=P%, bw=F, lat=Nx, tail=Nx, mtu=N, gid=wrong; loss and bw take @egress or @ingress)`},
		{"node-03", `missing ":EFFECT"`},
		{"node-03:loss=3%@up", "write @egress (what the HCA transmits) or @ingress"},
		{"node-03:lat=5x@egress", "lat takes no direction"},
		{"node-03:down@egress", "takes no direction; only loss and bw do"},
		{"node-03:loss=3@egress", "loss wants a percentage"},
		{"node-03:loss=3%@egress,loss=4%@egress", `effect "loss@egress" given twice`},
		{":down", "empty target"},
		{"node-03:", "no effect"},
		{"node-03:down,,dead", "empty effect"},
		{"node-03:loss=30", `"loss=30"`},
		{"node-03:loss=0%", `"loss=0%"`},
		{"node-03:loss=150%", `"loss=150%"`},
		{"node-03:loss=abc%", `"loss=abc%"`},
		{"node-03:bw=1.5", `"bw=1.5"`},
		{"node-03:bw=0", `"bw=0"`},
		{"node-03:bw=NaN", `"bw=NaN"`},
		{"node-03:lat=0.5x", `"lat=0.5x"`},
		{"node-03:lat=fast", `"lat=fast"`},
		{"node-03:lat=5xx", `"lat=5xx"`},
		{"node-03:tail=x", `"tail=x"`},
		{"node-03:tail=Infx", `"tail=Infx"`},
		{"node-03:mtu=abc", `"mtu=abc"`},
		{"node-03:mtu=10", `"mtu=10"`},
		{"node-03:gid=right", `"gid=right"`},
		{"node-03:down=1", `"down=1"`},
		{"node-03/mlx5_1:dead", "/mlx5_1"},
		{"node-03:down,down", `"down" given twice`},
		{"node-09~node-05:down", "backwards"},
		{"node-05~rack-09:down", `"rack-"`},
		{"node-05~node-9:down", `"node-9"`},
		{"node-a~node-b:down", `"node-a"`},
		{"node-05~:down", "empty node name"},
		{"node 03:down", `' '`},
		{"node-03/:down", `"node-03/"`},
		{"node-03/mlx5_1/2:down", `"node-03/mlx5_1/2"`},
		{"node-03/mlx5 1:down", `"mlx5 1"`},
		{"node-1~node-999999:down", "more than 100000"},
		{"node-1~node-1234567890:down", `"node-1234567890"`},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			_, err := ParseFault(c.spec)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "fault ") || !strings.Contains(msg, c.want) {
				t.Fatalf("error %q should start with the spec and name %s", msg, c.want)
			}
		})
	}
}

func TestParseFaultsReportsAll(t *testing.T) {
	_, err := ParseFaults([]string{"node-01:down", "node-02:lsos", "node-03:bw=7"})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"node-02:lsos", "node-03:bw=7"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %s", err, want)
		}
	}
	fs, err := ParseFaults([]string{"node-01:down", "node-02~node-04:bw=0.5"})
	if err != nil || len(fs) != 2 {
		t.Fatalf("got %v, %v", fs, err)
	}
}

func TestMerge(t *testing.T) {
	got := merge(Effects{Loss: 0.5, BW: 0.5, Lat: 2, DropAbove: 2048},
		Effects{Loss: 0.5, BW: 0.25, Tail: 3, DropAbove: 1024, WrongGID: true})
	want := Effects{Loss: 0.75, BW: 0.25, Lat: 2, Tail: 3, DropAbove: 1024, WrongGID: true}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if merge(Effects{}, Effects{}) != (Effects{}) {
		t.Fatal("merging nothing must stay nothing")
	}
}

func FuzzParseFault(f *testing.F) {
	for _, s := range []string{
		"node-03:down", "node-03/mlx5_1:loss=30%", "node-05~node-09:bw=0.4,lat=5x",
		"node-03:tail=20x,mtu=1024,gid=wrong", "node-03:lsos=3", "a~b:dead", "x1~x9/y:dead",
		"node-1~node-99999:down", "::", "~:", "n1~n2:loss=1e-300%", "n:lat=0x1p3x",
		"cable=a:1~b:2:flap=20%", "switch=s:flap=1e-300%,loss=1%", "cable=n/d>leaf:1:down",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ft, err := ParseFault(s)
		if err != nil {
			return
		}
		if ft.Effects == (Effects{}) {
			t.Fatalf("%q parsed to no effect", s)
		}
		canon := ft.String()
		back, err := ParseFault(canon)
		if err != nil {
			t.Fatalf("%q → %q does not re-parse: %v", s, canon, err)
		}
		if back.String() != canon {
			t.Fatalf("%q → %q → %q", s, canon, back.String())
		}
		if ft.Link != nil {
			return // a cable or switch: no node part
		}
		nodes := ft.Nodes()
		if len(nodes) == 0 || len(nodes) > maxRange {
			t.Fatalf("%q expands to %d nodes", s, len(nodes))
		}
		for _, n := range []string{nodes[0], nodes[len(nodes)-1]} {
			if !ft.matchesNode(n) {
				t.Fatalf("%q does not match its own node %q", s, n)
			}
		}
	})
}
