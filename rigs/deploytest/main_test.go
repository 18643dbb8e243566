package deploytest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/config"
)

func TestMain(m *testing.M) {
	code := m.Run()
	CleanupShared()
	os.Exit(code)
}

// cli returns the shared binary, failing the test when it cannot be built:
// a main that does not build is a real failure, not a reason to skip.
func cli(t *testing.T) *CLI {
	t.Helper()
	c, err := SharedCLI()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// repo returns the path of a file in the repository.
func repo(t *testing.T, parts ...string) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root}, parts...)...)
}

func read(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(repo(t, parts...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// keyOfEnv maps RDMAMESH_* variable names back to config keys.
func keyOfEnv() map[string]string {
	out := map[string]string{}
	for _, k := range config.Keys() {
		out[config.EnvName(k)] = k
	}
	return out
}
