// Package deploytest checks what operators deploy against the code: the
// Kubernetes manifests, docker-compose.yml, systemd units, Slurm scripts and
// Grafana dashboard under deploy/, and the docs generated from code. It has
// no production code; this file holds the helpers its tests and
// internal/config/docgen's tests share.
package deploytest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Root is the module root: the nearest directory above the working
// directory (a package directory under go test) that holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// CLI is a built rdmamesh binary whose --help output is the truth about
// which flags exist: a manifest or doc naming a flag the binary lacks would
// fail at startup in production, so it fails here first.
type CLI struct {
	Path string

	mu    sync.Mutex
	flags map[string]map[string]string
}

// BinEnv names a prebuilt binary to use instead of building one; handy when
// iterating, and for CI that has just built bin/rdmamesh anyway.
const BinEnv = "DEPLOYTEST_BIN"

// BuildCLI builds ./cmd/rdmamesh into dir (without the verbs tag: the
// flags are the same and no libibverbs headers are needed).
func BuildCLI(dir string) (*CLI, error) {
	if p := os.Getenv(BinEnv); p != "" {
		return &CLI{Path: p}, nil
	}
	root, err := Root()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "rdmamesh")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/rdmamesh")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/rdmamesh: %v\n%s", err, out)
	}
	return &CLI{Path: bin}, nil
}

var (
	sharedOnce sync.Once
	sharedCLI  *CLI
	sharedErr  error
	sharedDir  string
)

// SharedCLI builds the binary once per test process; call CleanupShared
// from TestMain when the tests are done.
func SharedCLI() (*CLI, error) {
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "deploytest-")
		if sharedErr == nil {
			sharedCLI, sharedErr = BuildCLI(sharedDir)
		}
	})
	return sharedCLI, sharedErr
}

// CleanupShared removes what SharedCLI built.
func CleanupShared() {
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
}

// flagLine matches cobra's help lines: "  -h, --help   help for x" and
// "      --name string   node name"; the word after the name is the type,
// absent for a bool.
var flagLine = regexp.MustCompile(`^\s+(?:-[A-Za-z0-9], )?--([a-z0-9][a-z0-9-]*)(?: ([a-zA-Z0-9]+))?(?:\s{2,}|$)`)

// Flags returns the flags of a subcommand (its own and the persistent
// ones), mapped to their type: "string", "strings", "int", "duration"...,
// or "" for a bool.
func (c *CLI) Flags(sub string) (map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.flags[sub]; ok {
		return f, nil
	}
	args := []string{"--help"}
	if sub != "" {
		args = []string{sub, "--help"}
	}
	cmd := exec.Command(c.Path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s", c.Path, strings.Join(args, " "), err, out.String())
	}
	flags := map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if m := flagLine.FindStringSubmatch(sc.Text()); m != nil {
			flags[m[1]] = m[2]
		}
	}
	if _, ok := flags["help"]; !ok {
		return nil, fmt.Errorf("%s %s: no flags found in the help text; has cobra's format changed?\n%s",
			c.Path, strings.Join(args, " "), out.String())
	}
	if c.flags == nil {
		c.flags = map[string]map[string]string{}
	}
	c.flags[sub] = flags
	return flags, nil
}

// CheckArgs checks a command line as a container or unit would run it:
// args[0] is the subcommand, every --flag must exist for it, and a flag
// that takes a value must get one.
func (c *CLI) CheckArgs(args []string) error {
	if len(args) == 0 {
		return errors.New("no subcommand")
	}
	flags, err := c.Flags(args[0])
	if err != nil {
		return err
	}
	var problems []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			problems = append(problems, fmt.Sprintf("%q is not a flag (rdmamesh %s takes no arguments)", a, args[0]))
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		typ, ok := flags[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("--%s is not a flag of rdmamesh %s", name, args[0]))
		case typ != "" && !hasValue:
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
				problems = append(problems, fmt.Sprintf("--%s needs a %s value", name, typ))
				continue
			}
			i++
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("rdmamesh %s: %s", strings.Join(args, " "), strings.Join(problems, "; "))
	}
	return nil
}
