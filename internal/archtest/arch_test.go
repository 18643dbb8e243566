// Package archtest keeps the dependency direction of docs/architecture.md
// true: worker → coordinator → matrix → web, cgo in internal/fabric/verbs only.
package archtest

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

const mod = "github.com/rdmamesh/rdmamesh/"

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	CgoFiles     []string
	Standard     bool
}

// listed keeps each tag set's listing: every test reads the same tree.
var listed sync.Map

func list(t *testing.T, tags string) []pkg {
	t.Helper()
	if pkgs, ok := listed.Load(tags); ok {
		return pkgs.([]pkg)
	}
	cmd := exec.Command("go", "list", "-tags", tags, "-json", "../../...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	listed.Store(tags, pkgs)
	return pkgs
}

// anything marks a package that wires or tests the whole product: it may
// import any package of the module.
var anything = []string{"*"}

// rules: every package of the module (relative to it) → the module packages
// it may import; nil means none. A package without a rule fails
// TestEveryPackageHasARule, so a new room states its place when it lands.
var rules = map[string][]string{
	// The ground floor: internal/ holds leaves that import only each other.
	"internal/probe": nil,
	"internal/wire":  {"internal/probe", "internal/api", "internal/counters"},
	// The probe-session exchange, spoken by workers and `rdmamesh probe`.
	"internal/session":  {"internal/probe", "internal/wire", "internal/fabric", "internal/member", "internal/selffault"},
	"internal/pairtest": {"internal/probe", "internal/wire", "internal/session", "internal/fabric"},
	"internal/api":      {"internal/probe"},
	"internal/hostlist": nil,
	// Counters are evidence the fabrics read and the worker reports:
	// a leaf like probe.
	"internal/counters": nil,
	"internal/fabric":   {"internal/probe", "internal/counters"},
	// The simulated fabric answers traces of its flows as pathtrace's
	// paths, in the worker's place.
	"internal/fabric/sim":   {"internal/probe", "internal/fabric", "internal/counters", "internal/pathtrace"},
	"internal/fabric/verbs": {"internal/probe", "internal/fabric", "internal/member"},
	"internal/inventory":    {"internal/probe", "internal/counters", "internal/lldp"},
	// A flow's hops, traced with its own 5-tuple; LLDP neighbours.
	"internal/pathtrace": nil,
	"internal/lldp":      nil,
	"internal/junit":     nil,
	"internal/liveplan":  {"internal/fabric", "internal/probe", "internal/wire"},
	"internal/member":    nil,
	"internal/selffault": nil,
	"internal/config":    nil,
	// The configuration reference's generator and the flag map it shares
	// with rigs/deploytest.
	"internal/config/docgen":          {"internal/config", "internal/config/docgen/keyflags"},
	"internal/config/docgen/keyflags": nil,
	"internal/archtest":               nil,
	// Helpers for tests and rigs: the condition wait, throwaway TLS
	// material, /proc readings and the memory guard.
	"internal/testkit/wait":     nil,
	"internal/testkit/tlstest":  nil,
	"internal/testkit/procstat": nil,

	"worker":      {"internal/probe", "internal/wire", "internal/session", "internal/member", "internal/selffault", "internal/fabric", "internal/liveplan", "worker/live", "internal/counters", "internal/pathtrace"},
	"worker/live": {"internal/fabric", "internal/liveplan", "internal/probe"},
	"coordinator": {"internal/probe", "internal/wire", "internal/member", "internal/api", "matrix", "coordinator/scheduler", "internal/hostlist", "internal/selffault", "cabling",
		"coordinator/sweep", "coordinator/linkplan", "coordinator/store", "coordinator/live", "internal/liveplan", "internal/fabric", "coordinator/raftlog", "topology", "internal/pathtrace"},
	"coordinator/scheduler": nil,
	// raft's log on disk: raft's types and the filesystem, nothing of ours.
	"coordinator/raftlog": nil,
	// The sweep engine declares what it needs (Dispatcher, Committer, View);
	// the coordinator adapts raft, the store and HTTP to them.
	"coordinator/sweep": {"coordinator/scheduler", "coordinator/linkplan", "internal/probe", "internal/api", "internal/hostlist", "matrix", "topology"},
	// The link planner is pure like the scheduler, with the topology's
	// routes to steer by.
	"coordinator/linkplan": {"coordinator/scheduler", "internal/probe", "topology"},
	// The store records the sweep's own types, so it sits above sweep.
	"coordinator/store": {"coordinator/sweep", "coordinator/scheduler", "internal/probe", "internal/wire", "internal/api", "matrix", "internal/counters", "topology"},
	"coordinator/live":  {"internal/api", "internal/liveplan", "internal/probe", "matrix"},
	"matrix":            {"internal/probe", "internal/hostlist", "internal/counters", "internal/junit", "topology"},
	// The fabric's model: pure, read by the matrix, the coordinator and
	// the wiring (the simulated fabric reads it through sim.Paths).
	"topology": nil,
	"web":      {"internal/api", "internal/probe", "matrix", "topology", "cabling"},
	// Synthetic matrices for the web's benchmarks and browser tests.
	"web/internal/synth": {"internal/probe", "matrix"},
	"gate":               {"internal/api", "matrix", "internal/probe", "cabling"},
	"metrics":            {"internal/api", "internal/probe", "internal/wire", "matrix"},

	// Wiring: the binary, and the in-process cluster the demo and the
	// cluster tests start.
	"cmd/rdmamesh": anything,
	"cluster":      anything,
	// The lab's checker reads the worker's and the matrix's JSON.
	"lab/labcheck": {"internal/probe", "internal/wire", "internal/hostlist", "matrix", "worker", "topology"},
	// Test rigs and their commands; TestRigsOnlyInTests keeps them out of
	// the product.
	"rigs/chaos":              anything,
	"rigs/chaos/cmd/chaos":    anything,
	"rigs/scale":              anything,
	"rigs/scale/cmd":          anything,
	"rigs/idle":               anything,
	"rigs/idle/cmd/idle-cost": anything,
	"rigs/judge":              anything,
	"rigs/judge/cmd":          anything,
	"rigs/links":              anything,
	"rigs/links/cmd":          anything,
	"rigs/livelinks":          anything,
	"rigs/livelinks/cmd":      anything,
	"rigs/deploytest":         {"internal/config/docgen/keyflags"},
	"web/e2e":                 anything,
	"cabling":                 {"topology", "internal/junit"}, "rigs/cabling": anything, "rigs/cabling/cmd": anything, // pure over the plan; its rig
}

// tagSets are the build tags the module's files use; a package or an import
// seen under any of them is checked.
var tagSets = []string{"", "verbs", "e2e"}

// errorOnce reports each message once, though a package is seen under
// every tag set.
func errorOnce(t *testing.T) func(format string, args ...any) {
	t.Helper()
	seen := map[string]bool{}
	return func(format string, args ...any) {
		t.Helper()
		if msg := fmt.Sprintf(format, args...); !seen[msg] {
			seen[msg] = true
			t.Error(msg)
		}
	}
}

func allowed(rel, dep string) bool {
	allow := rules[rel]
	return slices.Contains(allow, dep) || slices.Equal(allow, anything)
}

func TestEveryPackageHasARule(t *testing.T) {
	errorf := errorOnce(t)
	for _, tags := range tagSets {
		for _, p := range list(t, tags) {
			rel, ok := strings.CutPrefix(p.ImportPath, mod)
			if !ok {
				continue
			}
			if _, ruled := rules[rel]; !ruled {
				errorf("package %s has no import rule: add %q to rules in internal/archtest/arch_test.go "+
					"with the module packages it may import, and its row to docs/architecture.md's package table", rel, rel)
			}
		}
	}
}

func TestImportDirection(t *testing.T) {
	errorf := errorOnce(t)
	for _, tags := range tagSets {
		for _, p := range list(t, tags) {
			rel, ok := strings.CutPrefix(p.ImportPath, mod)
			if !ok {
				continue
			}
			if _, ruled := rules[rel]; !ruled {
				continue // TestEveryPackageHasARule names it
			}
			for _, imp := range p.Imports {
				if dep, ours := strings.CutPrefix(imp, mod); ours && !allowed(rel, dep) {
					errorf("%s imports %s: against the data flow (see docs/architecture.md)", rel, dep)
				}
			}
		}
	}
}

// internal/ is the ground floor: its packages, tests included, import only
// each other, never a product package (coordinator, worker, matrix, web,
// gate, cmd, cluster, metrics) or a rig.
func TestInternalIsAGroundFloor(t *testing.T) {
	errorf := errorOnce(t)
	for _, tags := range tagSets {
		for _, p := range list(t, tags) {
			rel, ok := strings.CutPrefix(p.ImportPath, mod)
			if !ok || !strings.HasPrefix(rel, "internal/") {
				continue
			}
			for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
				if dep, ours := strings.CutPrefix(imp, mod); ours && !strings.HasPrefix(dep, "internal/") {
					errorf("%s imports %s: internal/ holds leaves only; move the code that needs %s out of internal/", rel, dep, dep)
				}
			}
		}
	}
}

// Test rigs live under rigs/ and their helpers under internal/testkit/; a
// product package that imported one would ship the rig in the binary.
func TestRigsOnlyInTests(t *testing.T) {
	errorf := errorOnce(t)
	rig := func(rel string) bool {
		return strings.HasPrefix(rel, "rigs/") || strings.HasPrefix(rel, "internal/testkit/") || rel == "web/e2e"
	}
	for _, tags := range tagSets {
		for _, p := range list(t, tags) {
			rel, _ := strings.CutPrefix(p.ImportPath, mod)
			if rig(rel) {
				continue
			}
			for _, imp := range p.Imports {
				if dep, ours := strings.CutPrefix(imp, mod); ours && rig(dep) {
					errorf("%s imports the test rig %s outside a _test.go file", rel, dep)
				}
			}
		}
	}
}

func TestCgoOnlyInVerbs(t *testing.T) {
	for _, p := range list(t, "verbs") {
		if len(p.CgoFiles) > 0 && p.ImportPath != mod+"internal/fabric/verbs" {
			t.Errorf("%s has cgo files %v: cgo lives in internal/fabric/verbs only", p.ImportPath, p.CgoFiles)
		}
	}
}

// The sweep engine is tested without HTTP or raft (its harness fakes the
// Dispatcher and the Committer); that stays true only while nothing it
// builds on, directly or not, brings them in.
func TestSweepEngineWithoutHTTPOrRaft(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../coordinator/sweep").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "net/http", strings.HasPrefix(dep, "net/http/"), strings.HasPrefix(dep, "github.com/hashicorp/raft"),
			dep == mod+"coordinator/store", dep == mod+"coordinator":
			t.Errorf("coordinator/sweep depends on %s: the engine reaches workers through Dispatcher and raft through Committer", dep)
		}
	}
}
