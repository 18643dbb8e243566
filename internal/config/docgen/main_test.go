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
	"github.com/rdmamesh/rdmamesh/internal/testing/deploytest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	deploytest.CleanupShared()
	os.Exit(code)
}

// The checked-in reference is exactly what the generator writes today.
func TestConfigurationDocUpToDate(t *testing.T) {
	root, err := deploytest.Root()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := generate(&want); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "docs", "configuration.md")
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
		if !known[pattern] && !(isSection && slices.Contains(order(), sec)) {
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

// The flag table agrees with the binary in both directions: every flag named
// here exists, and every flag of a config-reading command either sets a
// key listed here or is declared as setting none.
func TestFlagsMatchBinary(t *testing.T) {
	cli, err := deploytest.SharedCLI()
	if err != nil {
		t.Fatal(err)
	}
	mapped := map[keyflags.Flag]bool{}
	for key, fl := range keyflags.Flags {
		for _, f := range fl {
			mapped[f] = true
			have, err := cli.Flags(f.Cmd)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := have[f.Name]; !ok {
				t.Errorf("%s: %s is not a flag of the binary", key, f)
			}
		}
	}
	global, err := cli.Flags("")
	if err != nil {
		t.Fatal(err)
	}
	for cmd, skip := range keyflags.NotKeys {
		have, err := cli.Flags(cmd)
		if err != nil {
			t.Fatal(err)
		}
		for name := range have {
			_, isGlobal := global[name]
			switch {
			case slices.Contains(skip, name), slices.Contains(keyflags.NotKeys[""], name):
			case cmd != "" && isGlobal:
				// Persistent flags are checked once, under "".
			case !mapped[keyflags.Flag{Cmd: cmd, Name: name}]:
				t.Errorf("rdmamesh %s --%s sets no key in keyflags.Flags: map it, or list it in keyflags.NotKeys", cmd, name)
			}
		}
	}
}

func order() []string {
	o, _ := sections()
	return o
}
