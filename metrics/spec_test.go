package metrics

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// Every metric a fully populated coordinator and worker export is in
// Reference, with the same type and labels, and every Reference entry is
// exported: the docs cannot list a metric that does not exist, nor miss one.
func TestReferenceMatchesExport(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCoordinator(standardSource(), CoordinatorOptions{}), NewLive(standardLive(), 0),
		BuildInfo("both", "v", "c", "go"))
	w := NewWorker()
	w.SetSource(newWorkerSource())
	w.ObserveTask(wire.TaskResult{Rails: []wire.RailResult{{Class: probe.ClassOK}}})
	reg.MustRegister(w)
	fams := families(t, reg)

	ref := map[string]Spec{}
	for _, s := range Reference() {
		if _, dup := ref[s.Name]; dup {
			t.Errorf("%s listed twice", s.Name)
		}
		ref[s.Name] = s
	}
	name := regexp.MustCompile(`^rdmamesh_[a-z0-9_]+$`)
	for n, s := range ref {
		if !name.MatchString(n) {
			t.Errorf("%s: not a rdmamesh_ snake_case name", n)
		}
		if s.Help == "" || s.Series == "" || s.Role == "" {
			t.Errorf("%s: help, series and role must all be documented", n)
		}
		if s.Type == typeCounter != strings.HasSuffix(n, "_total") {
			t.Errorf("%s: counters and only counters end in _total", n)
		}
		mf, ok := fams[n]
		if !ok {
			t.Errorf("%s: in Reference but not exported by a fully populated source", n)
			continue
		}
		if got := strings.ToLower(mf.GetType().String()); got != s.Type {
			t.Errorf("%s: exported as %s, documented as %s", n, got, s.Type)
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName())
			}
			want := slices.Clone(s.Labels)
			slices.Sort(want)
			if !slices.Equal(labels, want) {
				t.Errorf("%s: exported labels %v, documented %v", n, labels, s.Labels)
				break
			}
		}
	}
	for n := range fams {
		if _, ok := ref[n]; !ok && strings.HasPrefix(n, "rdmamesh_") {
			t.Errorf("%s: exported but missing from Reference (and so from docs/operations.md)", n)
		}
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range Reference() {
		if !strings.Contains(out, "| `"+s.Name+"` | "+s.Type+" |") {
			t.Errorf("table lacks a row for %s", s.Name)
		}
	}
	if strings.Count(out, "\n") != len(Reference())+2+3 {
		t.Errorf("table has %d lines, want header (2) + 3 role rows + one per metric", strings.Count(out, "\n"))
	}
}

// Registering twice in one registry (say, the demo's coordinator and a test
// harness) must fail loudly, not export duplicates.
func TestDoubleRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCoordinator(standardSource(), CoordinatorOptions{}))
	if err := reg.Register(NewCoordinator(standardSource(), CoordinatorOptions{})); err == nil {
		t.Fatal("second coordinator collector registered without error")
	}
	if n, err := testutil.GatherAndCount(reg, "rdmamesh_raft_state"); err != nil || n != 4 {
		t.Fatalf("raft_state: %d series, err %v", n, err)
	}
}
