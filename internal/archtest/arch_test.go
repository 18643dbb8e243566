// Package archtest keeps the dependency direction of docs/architecture.md
// true: worker → coordinator → matrix → web, cgo in internal/fabric/verbs only.
package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/rdmamesh/rdmamesh/"

type pkg struct {
	ImportPath string
	Imports    []string
	CgoFiles   []string
	Standard   bool
}

func list(t *testing.T, tags string) []pkg {
	t.Helper()
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
	return pkgs
}

// rules: package (relative to the module) → module packages it may import.
// nil means "only the standard library".
var rules = map[string][]string{
	"internal/probe": nil,
	"internal/wire":  {"internal/probe", "internal/api", "internal/counters"},
	// The probe-session exchange, spoken by workers and `rdmamesh probe`.
	"internal/session":      {"internal/probe", "internal/wire", "internal/fabric", "internal/member", "internal/selffault"},
	"coordinator/scheduler": nil,
	"internal/api":          {"internal/probe"},
	"matrix":                {"internal/probe", "internal/hostlist", "internal/counters"},
	// The frozen pre-compact matrix the equivalence tests compare with.
	"matrix/internal/reference": {"internal/probe", "internal/hostlist"},
	"internal/hostlist":         nil,
	// Counters are evidence the fabrics read and the worker reports:
	// a leaf like probe.
	"internal/fabric":     {"internal/probe", "internal/counters"},
	"internal/fabric/sim": {"internal/probe", "internal/fabric", "internal/counters"},
	"internal/member":     nil,
	"internal/config":     nil,
	"internal/selffault":  nil,
	"worker":              {"internal/probe", "internal/wire", "internal/session", "internal/member", "internal/selffault", "internal/fabric", "internal/liveplan", "worker/live", "internal/counters"},
	"coordinator": {"internal/probe", "internal/wire", "internal/member", "internal/api", "matrix", "coordinator/scheduler", "internal/hostlist", "internal/selffault",
		"coordinator/sweep", "coordinator/store", "coordinator/live", "internal/liveplan", "internal/fabric", "coordinator/raftlog"},
	// raft's log on disk: raft's types and the filesystem, nothing of ours.
	"coordinator/raftlog": nil,
	// The sweep engine declares what it needs (Dispatcher, Committer, View);
	// the coordinator adapts raft, the store and HTTP to them.
	"coordinator/sweep": {"coordinator/scheduler", "internal/probe", "internal/api", "internal/hostlist", "matrix"},
	// The store records the sweep's own types, so it sits above sweep.
	"coordinator/store":           {"coordinator/sweep", "coordinator/scheduler", "internal/probe", "internal/wire", "internal/api", "matrix", "internal/counters"},
	"web":                         {"internal/api", "internal/probe", "matrix"},
	"gate":                        {"internal/api", "matrix", "internal/probe"},
	"internal/inventory":          {"internal/probe", "internal/counters"},
	"internal/counters":           nil,
	"internal/liveplan":           {"internal/fabric", "internal/probe", "internal/wire"},
	"worker/live":                 {"internal/fabric", "internal/liveplan", "internal/probe"},
	"coordinator/live":            {"internal/api", "internal/liveplan", "internal/probe", "matrix"},
	"internal/fabric/verbs":       {"internal/probe", "internal/fabric", "internal/member"},
	"internal/metrics":            {"internal/api", "internal/probe", "internal/wire", "matrix"},
	"internal/testing/deploytest": {"internal/config/docgen/keyflags"},
	"internal/testing/procstat":   nil, // /proc readings and the memory guard every rig shares

	"internal/config/docgen/keyflags": nil,
}

func TestImportDirection(t *testing.T) {
	for _, tags := range []string{"", "verbs"} {
		for _, p := range list(t, tags) {
			rel, ok := strings.CutPrefix(p.ImportPath, mod)
			if !ok {
				continue
			}
			allowed, ruled := rules[rel]
			if !ruled {
				continue
			}
			for _, imp := range p.Imports {
				dep, ours := strings.CutPrefix(imp, mod)
				if !ours {
					continue
				}
				okDep := false
				for _, a := range allowed {
					okDep = okDep || a == dep
				}
				if !okDep {
					t.Errorf("%s imports %s: against the data flow (see docs/architecture.md)", rel, dep)
				}
			}
		}
	}
}

// Test rigs (chaos, scale, deploytest, tlstest) live under internal/testing;
// a product package that imported one would ship the rig in the binary. The
// matrix's frozen reference is such a rig too.
func TestRigsOnlyInTests(t *testing.T) {
	for _, p := range list(t, "") {
		rel, _ := strings.CutPrefix(p.ImportPath, mod)
		if strings.HasPrefix(rel, "internal/testing/") {
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, mod+"internal/testing/") || imp == mod+"matrix/internal/reference" {
				t.Errorf("%s imports the test rig %s outside a _test.go file", rel, imp)
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
