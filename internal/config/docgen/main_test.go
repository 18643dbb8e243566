package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/internal/config/docgen/keyflags"
)

// The checked-in reference is exactly what the generator writes today.
func TestConfigurationDocUpToDate(t *testing.T) {
	var want bytes.Buffer
	if err := generate(&want); err != nil {
		t.Fatal(err)
	}
	// go test runs in the package's directory, three below the module root.
	path := filepath.Join("..", "..", "..", "docs", "configuration.md")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; create it with: go run ./internal/config/docgen > docs/configuration.md", err)
	}
	if d := firstDiff(string(got), want.String()); d != "" {
		t.Fatalf("docs/configuration.md is stale (%s); regenerate with: go run ./internal/config/docgen > docs/configuration.md", d)
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: file has %q, code gives %q", i+1, gl, wl)
		}
	}
	return ""
}

// Every key has a row and a description; nothing here names a key the
// config no longer has.
func TestTablesCoverEveryKey(t *testing.T) {
	var b bytes.Buffer
	if err := generate(&b); err != nil {
		t.Fatal(err)
	}
	for _, k := range config.Keys() {
		if !strings.Contains(b.String(), "| `"+k+"` |") {
			t.Errorf("no row for %s", k)
		}
	}
	// A "|" inside a cell, even in backticks, splits the row in Markdown.
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "| `") && strings.Count(line, "|") != 7 {
			t.Errorf("row has %d cell separators, want 7: %s", strings.Count(line, "|"), line)
		}
	}
	known := map[string]bool{}
	for _, k := range config.Keys() {
		known[k] = true
	}
	for k := range descriptions {
		if !known[k] {
			t.Errorf("descriptions has %s, which is not a config key", k)
		}
	}
	for k := range keyflags.Flags {
		if !known[k] {
			t.Errorf("keyflags.Flags has %s, which is not a config key", k)
		}
	}
	for pattern := range keyflags.Unflagged {
		sec, isSection := strings.CutSuffix(pattern, ".*")
		if !known[pattern] && (!isSection || !slices.Contains(order(), sec)) {
			t.Errorf("keyflags.Unflagged has %s, which is neither a key nor a section", pattern)
		}
	}
	for sec := range sectionIntro {
		if !slices.Contains(order(), sec) {
			t.Errorf("sectionIntro has %s, which is not a config section", sec)
		}
	}
	for _, sec := range order() {
		if sectionIntro[sec] == "" {
			t.Errorf("section %s has no intro", sec)
		}
	}
}

func order() []string {
	o, _ := sections()
	return o
}
