package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func doctorTree(name string) string {
	return filepath.Join("..", "..", "internal", "inventory", "testdata", name)
}

func TestDoctorShowsNeighbours(t *testing.T) {
	var out, errOut bytes.Buffer
	code := runContext(context.Background(), []string{"doctor", "--sysfs-root", doctorTree("rxe-softroce")}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	want := `rxe0/1 (eth0) neighbour: leaf1 port dtap1 "port 1" (chassis 52:54:00:a1:00:01, TTL 20s, from lldpd)`
	if !strings.Contains(out.String(), "NEIGHBOURS (lldpd, as captured in lldpcli.json)\n  "+want+"\n") {
		t.Errorf("no neighbour section with %q in\n%s", want, out.String())
	}

	out.Reset()
	code = runContext(context.Background(), []string{"doctor", "--json", "--sysfs-root", doctorTree("cx5-roce-v4-index2")}, &out, &errOut)
	var rep struct {
		NeighborSource string `json:"neighbor_source"`
		Ports          []struct {
			Device   string
			Neighbor *struct {
				SystemName string `json:"system_name"`
				PortID     string `json:"port_id"`
				Unknown    string
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, out.String())
	}
	if len(rep.Ports) != 2 || rep.Ports[0].Neighbor == nil || rep.Ports[1].Neighbor == nil {
		t.Fatalf("ports %+v", rep.Ports)
	}
	if n := rep.Ports[0].Neighbor; !strings.HasPrefix(n.Unknown, "lldpd has heard no LLDP on enp101s0f0np0") || n.SystemName != "" {
		t.Errorf("silent port: %+v", n)
	}
	if n := rep.Ports[1].Neighbor; n.SystemName != "leaf-r0-03" || n.PortID != "swp12" || n.Unknown != "" {
		t.Errorf("heard port: %+v", n)
	}
}

func TestDoctorLLDPFlags(t *testing.T) {
	tree := doctorTree("rxe-softroce")
	var out, errOut bytes.Buffer
	if code := runContext(context.Background(), []string{"doctor", "--lldp-wait", "0", "--sysfs-root", tree}, &out, &errOut); code != 0 {
		t.Fatalf("--lldp-wait 0: exit %d\n%s", code, errOut.String())
	}
	if strings.Contains(out.String(), "NEIGHBOURS") || strings.Contains(out.String(), "lldp") {
		t.Errorf("--lldp-wait 0 still looked up neighbours:\n%s", out.String())
	}
	for _, c := range []struct{ args, want string }{
		{"--lldp-wait -1s", "--lldp-wait -1s: want 0 (no neighbours) or a wait such as 35s"},
		{"--lldp-source snmp", `--lldp-source: LLDP source "snmp": want frames, lldpd or auto`},
		{"--lldp-wait soon", `invalid argument "soon" for "--lldp-wait"`},
	} {
		out.Reset()
		errOut.Reset()
		args := append([]string{"doctor", "--sysfs-root", tree}, strings.Fields(c.args)...)
		if code := runContext(context.Background(), args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.args, code, errOut.String(), c.want)
		}
	}
}

// An InfiniBand port's neighbour comes from ibnetdiscover's output, found
// by the device's node GUID: the leaf and port where it is cabled, or
// why it is not there (another port cabled, a GUID the file lacks); a file
// that does not parse is a usage error naming its line.
func TestDoctorIBNeighbours(t *testing.T) {
	tree := doctorTree("ib-8hca")
	file := filepath.Join(tree, "ibnetdiscover.txt")
	var out, errOut bytes.Buffer
	if code := runContext(context.Background(), []string{"doctor", "--lldp-wait", "0", "--sysfs-root", tree, "--ibnetdiscover", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	for _, want := range []string{
		"mlx5_0/1 neighbour: leaf-r0-03 port 7 (chassis guid 0xfc6a1c0300aa0300, from ibnetdiscover)",
		"mlx5_3/1 neighbour: unknown: " + file + " cables port 2 of node GUID a088c20300f14000, not port 1",
		"mlx5_4/1 neighbour: unknown: node GUID a088c20300f14f00 is not in " + file,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("want %q in:\n%s", want, out.String())
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(bad, []byte("Switch 40 \"S-zz\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := runContext(context.Background(), []string{"doctor", "--sysfs-root", tree, "--ibnetdiscover", bad}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), bad+":1") {
		t.Errorf("a bad file: exit %d, stderr %q; want 2 naming %s:1", code, errOut.String(), bad)
	}
}
