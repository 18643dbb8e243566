package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every scenario shipped under lab/scenarios must load: the smoke and
// `make lab-faults` run them, and CI runs no VMs before the smoke.
func TestShippedScenariosLoad(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.yaml")
	if err != nil || len(files) < 12 {
		t.Fatalf("want the 12 built-in scenarios and more, found %d (%v)", len(files), err)
	}
	for _, f := range files {
		s, err := loadScenario(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); s.Name != want {
			t.Errorf("%s: name %q, want the file's name %q", f, s.Name, want)
		}
	}
}

func writeScenario(t *testing.T, body string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "case.yaml")
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

const goodExpect = "expect: {node: vm2, classes: [port-down], cause: down}\n"

func TestScenarioErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"inject: [{vm: vm2, run: x}]\nexpect: {node: vm2, classes: [port-down], cause: down}\nbogus: 1\n", "field bogus not found"},
		{goodExpect, "inject: no steps"},
		{"inject: [{vm: vm2}]\n" + goodExpect, "inject[0]: run"},
		{"inject: [{vm: vm2, host: vm2, run: x}]\n" + goodExpect, "exactly one of vm, host, link, worker and wait"},
		{"inject: [{link: leaf1-leaf2, run: x}]\n" + goodExpect, `link "leaf1-leaf2": want leafL-spineS or spineS-leafL`},
		{"inject: [{link: leaf1-spine2}]\n" + goodExpect, "inject[0]: run"},
		{"inject: [{vm: vm9, run: x}]\n" + goodExpect, "vm9: the scenario has 4 VMs"},
		{"inject: [{vm: node1, run: x}]\n" + goodExpect, `"node1" is not a lab VM`},
		{"inject: [{wait: vm2, state: broken}]\n" + goodExpect, "inject[0]: state"},
		{"inject: [{worker: vm2, action: kill, flags: --x}]\n" + goodExpect, "not for action kill"},
		{"inject: [{worker: vm2, action: freeze}]\n" + goodExpect, `action "freeze"`},
		{"inject: [{vm: vm2, run: x, state: usable}]\n" + goodExpect, "state: not a field of a vm/host/link step"},
		{"inject: [{vm: vm2, run: x, timeout: soon}]\n" + goodExpect, `timeout "soon"`},
		{"heal: [{host: vm7, run: x}]\ninject: [{vm: vm2, run: x}]\n" + goodExpect, "heal[0]"},
		{"sweep: {bw_iters: -1}\ninject: [{vm: vm2, run: x}]\n" + goodExpect, "sweep.bw_iters"},
		{"sweep: {connect: ib}\ninject: [{vm: vm2, run: x}]\n" + goodExpect, "sweep.connect"},
		{"sweep: {retests: 9}\ninject: [{vm: vm2, run: x}]\n" + goodExpect, "sweep.retests 9: want 0"},
		{"sweep: {warmup: 2}\ninject: [{vm: vm2, run: x}]\n" + goodExpect, "sweep.warmup: unknown field"},
		{"inject: [{vm: vm2, run: x}]\nexpect: {classes: [port-down], cause: down}\n", "expect.node"},
		{"inject: [{vm: vm2, run: x}]\nexpect: {node: vm2, cause: down}\n", "expect: nothing to judge"},
		{"inject: [{vm: vm2, run: x}]\nexpect: {node: vm2, classes: [timeout]}\n", "expect.cause"},
		{"inject: [{vm: vm2, run: x}]\nexpect: {exit: 2}\n", "expect.exit 2"},
		{"inject: [{vm: vm2, run: x}]\nexpect: {exclude: [node1]}\n", "expect.exclude"},
		{"inject: [{vm: vm2, run: x}]\nexpect: {warning: {kind: mtu, node: vm2}}\n", "expect.warning.kind"},
		{"inject: [{vm: vm2, run: x}]\nexpect: {node: vm2, direction: up}\n", "expect.direction"},
		{"inject: [{vm: vm2, run: x}]\nexpect: {node: vm2, suspect_verdict: bad}\n", "expect.suspect_verdict"},
		{"inject: [{vm: vm2, run: x}]\nexpect: {node: vm2, classes: [broken], cause: down}\n", `"broken" is not a failure class`},
		{"inject: [{vm: vm2, run: x}]\nexpect: {node: vm2, classes: [timeout], cause: '('}\n", "expect.cause"},
		{"inject: [{vm: vm2, run: x}]\nexpect: {node: vm2, classes: [timeout], cause: x, suspect_kind: [leaf]}\n", "expect.suspect_kind"},
		{"vms: 1\ninject: [{vm: vm1, run: x}]\nexpect: {node: vm1, classes: [timeout], cause: x}\n", "vms 1"},
		{"name: Bad Name\ninject: [{vm: vm2, run: x}]\n" + goodExpect, "name \"Bad Name\""},
	} {
		_, err := loadScenario(writeScenario(t, tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.body, err, tc.want)
		}
	}
}

// The plan is sourced by bash: run it with stub functions that print
// their arguments, so quoting and order are checked by a real shell.
func TestPlanRunsInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	f := writeScenario(t, `name: it-s
about: "vm2's quote"
inject_after_cells: 2
sweep: {bw_iters: 3, connect: rdmacm}
inject:
  - vm: vm2
    run: |
      echo 'a b' "$VM"
      true
  - worker: vm3
    prefix: ulimit -l 64;
    flags: --gid index=0
heal:
  - host: vm2
    run: ip link set $TAP mtu 9100
  - link: leaf1-spine2
    run: nft delete table inet lossy
  - wait: vm3
    state: gid1
expect: {node: vm2, classes: [timeout, retry-exceeded], cause: "lost|it's", min_bad: 3, suspect_kind: [hca, node]}
`)
	s, err := loadScenario(f)
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	s.plan(&plan)
	stub := `for f in scn_begin scn_vm scn_host scn_link scn_worker scn_wait scn_sweep_start scn_sweep_cells scn_sweep_end scn_healed scn_expect; do
  eval "$f() { printf '%s' $f; printf ' <%s>' \"\$@\"; echo; }"
done
`
	out, err := exec.Command(bash, "-c", stub+plan.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	want := []string{
		`scn_begin <it-s> <4> <vm2's quote>`,
		`scn_sweep_start <it-s> <bw_iters=3> <connect=rdmacm>`,
		`scn_sweep_cells <it-s> <2>`,
		"scn_vm <inject> <vm2> <echo 'a b' \"$VM\"\ntrue\n> <>",
		`scn_worker <inject> <vm3> <restart> <--gid index=0> <ulimit -l 64;> <>`,
		`scn_sweep_end <it-s>`,
		`scn_host <heal> <vm2> <ip link set $TAP mtu 9100> <>`,
		`scn_link <heal> <leaf1-spine2> <nft delete table inet lossy> <>`,
		`scn_wait <vm3> <gid1> <120s>`,
		`scn_healed <it-s>`,
		`scn_expect <it-s> <-node> <vm2> <-class> <timeout,retry-exceeded> <-cause> <lost|it's> <-fix> <> <-min-bad> <3> <-suspect-kind> <hca,node>`,
	}
	if got := strings.TrimSpace(string(out)); got != strings.Join(want, "\n") {
		t.Errorf("plan ran as\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}
