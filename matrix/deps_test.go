package matrix

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// allowedImports are matrix's only non-stdlib imports: the wire types, the
// (stdlib-only) hostlist package for the Slurm exclude list, the
// (stdlib-only) counters package for counter evidence, the topology model
// for link localization, and the YAML parser
// for threshold profiles.
var allowedImports = map[string]bool{
	"github.com/rdmamesh/rdmamesh/internal/probe":    true,
	"github.com/rdmamesh/rdmamesh/internal/hostlist": true,
	"github.com/rdmamesh/rdmamesh/internal/counters": true,
	"github.com/rdmamesh/rdmamesh/internal/junit":    true,
	"github.com/rdmamesh/rdmamesh/topology":          true,
	"go.yaml.in/yaml/v3":                             true,
}

// matrix is pure: the standard library, the wire types and the two above,
// nothing else, so the gate and the web UI can use it without dragging in
// raft or gin.
func TestImportsArePure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first := strings.SplitN(path, "/", 2)[0]
			if !allowedImports[path] && strings.Contains(first, ".") {
				t.Errorf("%s imports %s", name, path)
			}
			if path == "C" || path == "os" || path == "net" || path == "time" {
				t.Errorf("%s imports %s: matrix must stay pure", name, path)
			}
		}
	}
}

// bigFabric is a 64-node, 8-rail sweep (32,256 cells) with a dead HCA, a
// slow node and a bad pair, so localization does real work.
func bigFabric() *fixture {
	f := newFixture(64, 8)
	f.touching("node-10", 3, fail(probe.ClassPortDown, "port down", ""))
	f.touching("node-20", AllRails, slow(4))
	fail(probe.ClassRetryExceeded, "retry exceeded", "")(f.cell("node-30", "node-31", 5))
	return f
}

// TestBigFabric keeps the benchmark's scenario honest in plain `go test`.
func TestBigFabric(t *testing.T) {
	m := bigFabric().build()
	if len(m.Cells) != 64*63*8 || len(m.Suspects) != 3 {
		t.Fatalf("cells %d, suspects:\n%s", len(m.Cells), m.Summary())
	}
	got := []string{m.Suspects[0].title(), m.Suspects[1].title(), m.Suspects[2].title()}
	// The dead HCA first (its writes fail), then the slow node (every one
	// of its 8,064 cells, but only slower), then the weak single pair.
	want := []string{"hca node-10/mlx5_3 (rail 3)", "node node-20", "pair node-30 -> node-31 (rail 5)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func BenchmarkBuild(b *testing.B) {
	f := bigFabric()
	b.ReportAllocs()
	for b.Loop() {
		Build(f.nodes, f.cells, DefaultThresholds())
	}
}
