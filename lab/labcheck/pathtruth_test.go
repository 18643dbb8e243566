package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// closPlan is the cabling plan lab/clos.sh writes for a 2x2 Clos with n
// VMs: the test reads the lab's own plan, so it also proves the plan
// parses.
func closPlan(t *testing.T, n int) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run lab/clos.sh")
	}
	out, err := exec.Command(bash, "-c", ". ../common.sh && . ../clos.sh && LAB_CLOS=2x2 && clos_plan "+strconv.Itoa(n)).Output()
	if err != nil {
		t.Fatalf("clos_plan: %v", err)
	}
	return string(out)
}

func TestPathTruth(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caps := filepath.Join(dir, "cap")
	if err := os.Mkdir(caps, 0o755); err != nil {
		t.Fatal(err)
	}
	line := "11:20:04.590109 s1l1  In  IP 10.78.1.11.%s > 10.78.2.12.4791: UDP, length 40\n"
	if err := os.WriteFile(filepath.Join(caps, "spine1.txt"), []byte(strings.ReplaceAll(line, "%s", "49441")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(caps, "spine2.txt"), []byte(strings.ReplaceAll(line, "%s", "49476")), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := write("plan.yaml", closPlan(t, 2))
	trace := func(sport, spine string) string {
		return `{"flow": {"src_ip": "10.78.1.11", "dst_ip": "10.78.2.12", "src_port": ` + sport + `},
			"hops": [{"ttl": 1, "addr": "10.78.1.1"}, {"ttl": 2, "addr": "` + spine + `"}, {"ttl": 3, "addr": "10.79.2.5"}]}`
	}
	good := write("good.json", "["+trace("49441", "10.79.1.6")+","+trace("49476", "10.79.1.10")+"]")
	if err := pathTruth(caps, plan, 2, []string{good}); err != nil {
		t.Fatalf("traces that agree with the wire: %v", err)
	}
	if err := pathTruth(caps, plan, 3, []string{good}); err == nil || !strings.Contains(err.Error(), "2 flows agree, want at least 3") {
		t.Fatalf("too few flows: %v", err)
	}
	wrong := write("wrong.json", "["+trace("49441", "10.79.1.10")+"]")
	if err := pathTruth(caps, plan, 1, []string{wrong}); err == nil || !strings.Contains(err.Error(), "traced through spine2, its packets crossed spine1") {
		t.Fatalf("a trace the wire contradicts: %v", err)
	}
	silent := write("silent.json", `[{"flow": {"src_ip": "10.78.1.11", "dst_ip": "10.78.2.12", "src_port": 49441}, "hops": [{"ttl": 1, "addr": "10.78.1.1"}, {"ttl": 2}]}]`)
	if err := pathTruth(caps, plan, 1, []string{silent}); err == nil || !strings.Contains(err.Error(), "names no spine") {
		t.Fatalf("a trace without its spine: %v", err)
	}
}
