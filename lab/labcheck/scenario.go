package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Scenario is one user-defined fault case (lab/scenarios/*.yaml, format in
// lab/README.md): what breaks, how it heals, what the sweep must say.
type Scenario struct {
	Name  string         `yaml:"name"`
	About string         `yaml:"about"`
	VMs   int            `yaml:"vms"`
	Sweep map[string]any `yaml:"sweep"`
	// InjectAfterCells > 0 injects once that many cells are measured: a
	// fault that strikes during the sweep. 0 injects before it starts.
	InjectAfterCells int    `yaml:"inject_after_cells"`
	Inject           []Step `yaml:"inject"`
	Heal             []Step `yaml:"heal"`
	Expect           Expect `yaml:"expect"`
}

// Step does one thing; exactly one of VM, Host, Link, Worker and Wait is
// set.
type Step struct {
	VM   string `yaml:"vm"`   // run Run inside this VM
	Host string `yaml:"host"` // run Run on the host side of this VM's taps
	// Link runs Run in the router a routed Clos link leaves (lab/clos.sh):
	// leafL-spineS is the leaf's veth towards the spine, spineS-leafL the
	// spine's towards the leaf; DEV names it, PEER_NS and PEER_DEV its
	// other end.
	Link    string `yaml:"link"`
	Worker  string `yaml:"worker"` // act on this VM's worker
	Wait    string `yaml:"wait"`   // wait until the coordinator sees this node in State
	Run     string `yaml:"run"`
	Action  string `yaml:"action"` // worker: restart (default), stop, kill, start, pause (SIGSTOP: hung), resume
	Flags   string `yaml:"flags"`  // worker: extra flags, e.g. --gid index=0
	Prefix  string `yaml:"prefix"` // worker: shell run before it, e.g. "ulimit -l 64;"
	Wrap    string `yaml:"wrap"`   // worker: a command that execs it, e.g. setpriv ...
	State   string `yaml:"state"`  // wait: usable, unusable, dead, gidN or mtuN (the port's active MTU)
	Timeout string `yaml:"timeout"`
}

// Expect is what labcheck expect judges (expect.go).
type Expect struct {
	Node        string   `yaml:"node"`
	SuspectKind []string `yaml:"suspect_kind"`
	Classes     []string `yaml:"classes"`
	Cause       string   `yaml:"cause"`
	Fix         string   `yaml:"fix"`
	MinBad      int      `yaml:"min_bad"`
	// SuspectReason is a regular expression the first suspect's reason
	// must match: where the diagnosis lives that no single cell has (the
	// direction, the counters, the round a fault started).
	SuspectReason  string `yaml:"suspect_reason"`
	SuspectVerdict string `yaml:"suspect_verdict"` // failed | slow-latency | low-bandwidth
	Direction      string `yaml:"direction"`       // egress | ingress
	// NoFailed: no cell may fail (a configuration warning, a performance
	// fault, an untested worker).
	NoFailed bool `yaml:"no_failed"`
	// Exit is the gate's exit code (0 pass, 1 fault, 3 untested, 4
	// performance), run as an operator runs it after the sweep.
	Exit *int `yaml:"exit"`
	// Exclude is the exact exclude list the gate writes; [] for none.
	Exclude *[]string `yaml:"exclude"`
	// Warning is a configuration warning the matrix must give.
	Warning *ExpectWarning `yaml:"warning"`
	// MinSweepSeconds: the sweep lasted at least this long, so a fault
	// meant to span it (a flapping port) did.
	MinSweepSeconds int `yaml:"min_sweep_seconds"`
	// Link: the first suspect is this link of the routed Clos.
	Link *ExpectLink `yaml:"link"`
	// Cabling: rdmamesh cabling, run after the sweep, gives this finding.
	Cabling *ExpectCabling `yaml:"cabling"`
}

// ExpectCabling is one port's cabling finding: the VM whose port it is,
// its verdict, and the prefixes of the switch port the plan expects and
// the one found ("leaf1:", "leaf2:").
type ExpectCabling struct {
	Node     string `yaml:"node"`
	Verdict  string `yaml:"verdict"`
	Expected string `yaml:"expected"`
	Found    string `yaml:"found"`
}

// ExpectLink is a link suspect: the prefixes of its ends, in order
// ("leaf1:", "spine1:"), and its direction (one-way, both).
type ExpectLink struct {
	Ends      []string `yaml:"ends"`
	Direction string   `yaml:"direction"`
}

// ExpectWarning is a configuration warning on a node, or on a link of the
// routed Clos, with a fix.
type ExpectWarning struct {
	Kind string `yaml:"kind"` // mtu-mix | wrong-network | link-unused
	Node string `yaml:"node"`
	Link string `yaml:"link"` // link-unused: the cable or link as the matrix names it
	Fix  string `yaml:"fix"`
}

var (
	sweepInts     = []string{"latency_iters", "latency_size", "bw_iters", "bw_size"}
	sweepStrings  = map[string][]string{"connect": {probe.ConnectExchange, probe.ConnectRDMACM}, "mode": {"quick", "full"}, "pattern": {"all-pairs", "links", "fabric"}}
	suspectKinds  = []string{"hca", "node", "pair", "rail", "switch-group"}
	workerActions = []string{"restart", "stop", "kill", "start", "pause", "resume"}
	vmName        = regexp.MustCompile(`^vm([1-9][0-9]*)$`)
	linkName      = regexp.MustCompile(`^(leaf[1-9]-spine[1-9]|spine[1-9]-leaf[1-9])$`)
	waitState     = regexp.MustCompile(`^(usable|unusable|dead|gid[0-9]+|mtu[0-9]+|lldp-[a-z0-9-]+)$`)
	// cablingVerdicts are package cabling's, but a mismatch: what a
	// scenario can expect.
	cablingVerdicts = []string{"swapped", "wrong-rail", "wrong-leaf", "wrong-switch", "wrong-port", "missing", "unexpected", "unknown-switch"}
	scenarioName    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	failedClasses   = []probe.Class{probe.ClassPortDown, probe.ClassRetryExceeded, probe.ClassTimeout, probe.ClassPeerLost,
		probe.ClassInvalidGID, probe.ClassMTUMismatch, probe.ClassNoNetdev, probe.ClassResource, probe.ClassSkipped, probe.ClassInternal}
)

// loadScenario reads and checks a scenario file; errors name the field.
func loadScenario(file string) (*Scenario, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var s Scenario
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w (the fields are in lab/README.md, \"Fault scenarios\")", file, err)
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if s.VMs == 0 {
		s.VMs = 4
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &s, nil
}

func (s *Scenario) check() error {
	if !scenarioName.MatchString(s.Name) {
		return fmt.Errorf("name %q: use lower-case letters, digits and dashes (it names the table row and the matrix file)", s.Name)
	}
	if s.VMs < 2 || s.VMs > 8 {
		return fmt.Errorf("vms %d: the lab runs 2 to 8 VMs", s.VMs)
	}
	for k, v := range s.Sweep {
		switch {
		case slices.Contains(sweepInts, k):
			if n, ok := v.(int); !ok || n < 1 {
				return fmt.Errorf("sweep.%s %v: want a positive whole number", k, v)
			}
		case k == "retests":
			if n, ok := v.(int); !ok || n < 0 || n > 5 {
				return fmt.Errorf("sweep.retests %v: want 0 (no confirmation pass) to 5", v)
			}
		case sweepStrings[k] != nil:
			if str, ok := v.(string); !ok || !slices.Contains(sweepStrings[k], str) {
				return fmt.Errorf("sweep.%s %v: want one of %s", k, v, strings.Join(sweepStrings[k], ", "))
			}
		default:
			return fmt.Errorf("sweep.%s: unknown field; use %s, retests, connect, mode or pattern", k, strings.Join(sweepInts, ", "))
		}
	}
	if s.InjectAfterCells < 0 {
		return fmt.Errorf("inject_after_cells %d: want 0 (before the sweep) or a number of cells", s.InjectAfterCells)
	}
	if len(s.Inject) == 0 {
		return fmt.Errorf("inject: no steps; a scenario must break something")
	}
	for i, st := range s.Inject {
		if err := st.check(s.VMs); err != nil {
			return fmt.Errorf("inject[%d]: %w", i, err)
		}
	}
	for i, st := range s.Heal {
		if err := st.check(s.VMs); err != nil {
			return fmt.Errorf("heal[%d]: %w", i, err)
		}
	}
	return s.Expect.check(s.VMs)
}

func (st Step) check(vms int) error {
	set := 0
	target := ""
	for _, t := range []string{st.VM, st.Host, st.Link, st.Worker, st.Wait} {
		if t != "" {
			set++
			target = t
		}
	}
	if set != 1 {
		return fmt.Errorf("a step has exactly one of vm, host, link, worker and wait (it has %d)", set)
	}
	if st.Link != "" {
		if !linkName.MatchString(st.Link) {
			return fmt.Errorf("link %q: want leafL-spineS or spineS-leafL (the direction leaving that router), like leaf1-spine2", st.Link)
		}
	} else if err := checkVM(target, vms); err != nil {
		return err
	}
	if st.Timeout != "" {
		if d, err := time.ParseDuration(st.Timeout); err != nil || d <= 0 {
			return fmt.Errorf("timeout %q: want a duration such as 90s", st.Timeout)
		}
	}
	only := func(kind string, fields map[string]string) error {
		for f, v := range fields {
			if v != "" {
				return fmt.Errorf("%s: not a field of a %s step", f, kind)
			}
		}
		return nil
	}
	switch {
	case st.VM != "" || st.Host != "" || st.Link != "":
		if strings.TrimSpace(st.Run) == "" {
			return fmt.Errorf("run: the command to run is missing")
		}
		return only("vm/host/link", map[string]string{"action": st.Action, "flags": st.Flags, "prefix": st.Prefix, "wrap": st.Wrap, "state": st.State})
	case st.Worker != "":
		if st.Action != "" && !slices.Contains(workerActions, st.Action) {
			return fmt.Errorf("action %q: want %s", st.Action, strings.Join(workerActions, ", "))
		}
		if (st.Action == "stop" || st.Action == "kill" || st.Action == "pause" || st.Action == "resume") && st.Flags+st.Prefix+st.Wrap != "" {
			return fmt.Errorf("flags, prefix and wrap start a worker: not for action %s", st.Action)
		}
		return only("worker", map[string]string{"run": st.Run, "state": st.State})
	default:
		if !waitState.MatchString(st.State) {
			return fmt.Errorf("state %q: want usable, unusable, dead, gidN (e.g. gid1), mtuN or lldp-SWITCH (its first port's LLDP neighbour, e.g. lldp-leaf2)", st.State)
		}
		return only("wait", map[string]string{"run": st.Run, "action": st.Action, "flags": st.Flags, "prefix": st.Prefix, "wrap": st.Wrap})
	}
}

func checkVM(name string, vms int) error {
	m := vmName.FindStringSubmatch(name)
	if m == nil {
		return fmt.Errorf("%q is not a lab VM: they are vm1 .. vm%d", name, vms)
	}
	if n, _ := strconv.Atoi(m[1]); n > vms {
		return fmt.Errorf("%s: the scenario has %d VMs (vms)", name, vms)
	}
	return nil
}

func (e Expect) check(vms int) error {
	judgesSuspect := len(e.Classes) > 0 || len(e.SuspectKind) > 0 || e.SuspectReason != "" || e.SuspectVerdict != "" || e.Direction != ""
	if judgesSuspect || e.Node != "" {
		if err := checkVM(e.Node, vms); err != nil {
			return fmt.Errorf("expect.node: %w (the VM the fault is on)", err)
		}
	}
	if !judgesSuspect && !e.NoFailed && e.Exit == nil && e.Exclude == nil && e.Warning == nil && e.Link == nil && e.Cabling == nil {
		return fmt.Errorf("expect: nothing to judge; give classes (and cause), a suspect, no_failed, exit, exclude, warning, link or cabling")
	}
	if cb := e.Cabling; cb != nil {
		if err := checkVM(cb.Node, vms); err != nil {
			return fmt.Errorf("expect.cabling.node: %w", err)
		}
		if !slices.Contains(cablingVerdicts, cb.Verdict) {
			return fmt.Errorf("expect.cabling.verdict %q: want one of %s", cb.Verdict, strings.Join(cablingVerdicts, ", "))
		}
		if strings.Contains(cb.Expected+cb.Found, ",") {
			return fmt.Errorf("expect.cabling: expected and found are switch port prefixes like \"leaf1:\", without commas")
		}
	}
	if l := e.Link; l != nil {
		if len(l.Ends) != 2 {
			return fmt.Errorf("expect.link.ends: want the two ends' prefixes, like [\"leaf1:\", \"spine1:\"]")
		}
		if l.Direction != "" && l.Direction != "one-way" && l.Direction != "both" {
			return fmt.Errorf("expect.link.direction %q: want one-way or both", l.Direction)
		}
	}
	for _, c := range e.Classes {
		if !slices.Contains(failedClasses, probe.Class(c)) {
			return fmt.Errorf("expect.classes: %q is not a failure class (%v)", c, failedClasses)
		}
	}
	if len(e.Classes) > 0 && e.Cause == "" {
		return fmt.Errorf("expect.cause: a regular expression a failed cell's cause must match, e.g. 'lost|never acknowledged'")
	}
	for _, k := range e.SuspectKind {
		if !slices.Contains(suspectKinds, k) {
			return fmt.Errorf("expect.suspect_kind: %q: want %s", k, strings.Join(suspectKinds, ", "))
		}
	}
	if v := e.SuspectVerdict; v != "" && !slices.Contains([]string{"failed", "slow-latency", "low-bandwidth", "untested"}, v) {
		return fmt.Errorf("expect.suspect_verdict %q: want failed, slow-latency, low-bandwidth or untested", v)
	}
	if d := e.Direction; d != "" && d != "egress" && d != "ingress" {
		return fmt.Errorf("expect.direction %q: want egress or ingress", d)
	}
	if e.Exit != nil && !slices.Contains([]int{0, 1, 3, 4}, *e.Exit) {
		return fmt.Errorf("expect.exit %d: want the gate's 0 (pass), 1 (fault), 3 (untested) or 4 (performance)", *e.Exit)
	}
	if e.Exclude != nil {
		for _, n := range *e.Exclude {
			if err := checkVM(n, vms); err != nil {
				return fmt.Errorf("expect.exclude: %w", err)
			}
		}
	}
	fix := ""
	if w := e.Warning; w != nil {
		switch w.Kind {
		case "mtu-mix", "wrong-network":
			if err := checkVM(w.Node, vms); err != nil {
				return fmt.Errorf("expect.warning.node: %w", err)
			}
		case "link-unused":
			if w.Node != "" || w.Link == "" {
				return fmt.Errorf("expect.warning: a link-unused warning names a link (link: \"leaf1:101 <-> spine1:1\"), no node")
			}
		default:
			return fmt.Errorf("expect.warning.kind %q: want mtu-mix, wrong-network or link-unused", w.Kind)
		}
		fix = w.Fix
	}
	for f, re := range map[string]string{"cause": e.Cause, "fix": e.Fix, "suspect_reason": e.SuspectReason, "warning.fix": fix} {
		if _, err := regexp.Compile(re); err != nil {
			return fmt.Errorf("expect.%s: %w", f, err)
		}
	}
	if e.MinBad < 0 || e.MinSweepSeconds < 0 {
		return fmt.Errorf("expect.min_bad %d, min_sweep_seconds %d: want 0 or more", e.MinBad, e.MinSweepSeconds)
	}
	return nil
}

// args are labcheck expect's flags for e.
func (e Expect) args() []string {
	var a []string
	add := func(flag, v string) {
		if v != "" {
			a = append(a, flag, v)
		}
	}
	add("-node", e.Node)
	if len(e.Classes) > 0 {
		a = append(a, "-class", strings.Join(e.Classes, ","), "-cause", e.Cause, "-fix", e.Fix, "-min-bad", strconv.Itoa(max(e.MinBad, 1)))
	}
	add("-suspect-kind", strings.Join(e.SuspectKind, ","))
	add("-suspect-reason", e.SuspectReason)
	add("-suspect-verdict", e.SuspectVerdict)
	add("-direction", e.Direction)
	if l := e.Link; l != nil {
		add("-link", strings.Join(l.Ends, ","))
		add("-link-direction", l.Direction)
	}
	if e.NoFailed {
		a = append(a, "-no-failed")
	}
	if e.Exit != nil {
		add("-gate-exit", strconv.Itoa(*e.Exit))
	}
	if e.Exclude != nil {
		add("-exclude", cmp.Or(strings.Join(*e.Exclude, ","), "-"))
	}
	if w := e.Warning; w != nil {
		add("-warning", w.Kind+":"+cmp.Or(w.Node, w.Link))
		add("-warning-fix", w.Fix)
	}
	if e.MinSweepSeconds > 0 {
		add("-min-sweep-seconds", strconv.Itoa(e.MinSweepSeconds))
	}
	if cb := e.Cabling; cb != nil {
		add("-cabling", strings.Join([]string{cb.Node, cb.Verdict, cb.Expected, cb.Found}, ","))
	}
	return a
}

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// plan writes the scenario as calls of lab/scenario.sh's functions, one a
// line, every argument quoted: the runner sources it.
func (s *Scenario) plan(w io.Writer) {
	line := func(args ...string) {
		q := make([]string, len(args))
		for i, a := range args {
			q[i] = shq(a)
		}
		fmt.Fprintln(w, strings.Join(q, " "))
	}
	steps := func(phase string, list []Step) {
		for _, st := range list {
			switch {
			case st.VM != "":
				line("scn_vm", phase, st.VM, st.Run, st.Timeout)
			case st.Host != "":
				line("scn_host", phase, st.Host, st.Run, st.Timeout)
			case st.Link != "":
				line("scn_link", phase, st.Link, st.Run, st.Timeout)
			case st.Worker != "":
				line("scn_worker", phase, st.Worker, cmp.Or(st.Action, "restart"), st.Flags, st.Prefix, st.Wrap)
			default:
				line("scn_wait", st.Wait, st.State, cmp.Or(st.Timeout, "120s"))
			}
		}
	}
	keys := make([]string, 0, len(s.Sweep))
	for k := range s.Sweep {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var args []string
	for _, k := range keys {
		args = append(args, fmt.Sprintf("%s=%v", k, s.Sweep[k]))
	}
	line("scn_begin", s.Name, strconv.Itoa(s.VMs), s.About)
	if s.InjectAfterCells == 0 {
		steps("inject", s.Inject)
	}
	line(append([]string{"scn_sweep_start", s.Name}, args...)...)
	if s.InjectAfterCells > 0 {
		line("scn_sweep_cells", s.Name, strconv.Itoa(s.InjectAfterCells))
		steps("inject", s.Inject)
	}
	line("scn_sweep_end", s.Name)
	steps("heal", s.Heal)
	line("scn_healed", s.Name)
	line(append([]string{"scn_expect", s.Name}, s.Expect.args()...)...)
}

// scenario: labcheck scenario FILE (print its plan) or labcheck scenario
// -vms FILE... (check them, print the most VMs any needs).
func scenario(args []string) error {
	vmsOnly := len(args) > 0 && args[0] == "-vms"
	if vmsOnly {
		args = args[1:]
	}
	if len(args) == 0 || (!vmsOnly && len(args) != 1) {
		return fmt.Errorf("usage: labcheck scenario FILE | labcheck scenario -vms FILE [FILE ...]")
	}
	most := 0
	for _, f := range args {
		s, err := loadScenario(f)
		if err != nil {
			return err
		}
		most = max(most, s.VMs)
		if !vmsOnly {
			s.plan(os.Stdout)
		}
	}
	if vmsOnly {
		fmt.Println(most)
	}
	return nil
}
