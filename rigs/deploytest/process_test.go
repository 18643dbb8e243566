package deploytest

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/internal/config/docgen/keyflags"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/inventory"
)

// process is one rdmamesh invocation as a deployment file describes it: a
// container, a compose service or a systemd unit.
type process struct {
	where string
	args  []string          // args[0] is the subcommand
	env   map[string]string // values as the process sees them
	files map[string]string // files the process can open, by path
}

// checked is what a process would run with.
type checked struct {
	cfg        *config.Config
	secretsErr error
}

// check validates a process the way the binary would at startup, except
// that nothing listens: every flag exists and has its value, every
// RDMAMESH_* variable is a key the subcommand reads, --config and the
// *_file keys point at files the process has, and the file, variables and
// flags together load and validate. It returns the loaded configuration.
func check(t *testing.T, p process) checked {
	t.Helper()
	if err := cli(t).CheckArgs(p.args); err != nil {
		t.Errorf("%s: %v", p.where, err)
		return checked{}
	}
	cmd := p.args[0]
	keys := keyOfEnv()
	// Files the process sees, copied under a temp dir so paths can be
	// rewritten to point there.
	dir := t.TempDir()
	local := func(path string) (string, bool) {
		body, ok := p.files[path]
		if !ok {
			return "", false
		}
		lp := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(path, "/"), "/", "_"))
		if err := os.WriteFile(lp, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return lp, true
	}

	env := map[string]string{}
	for name, val := range p.env {
		if !strings.HasPrefix(name, "RDMAMESH_") {
			continue
		}
		key, ok := keys[name]
		if !ok {
			t.Errorf("%s: %s is not a config variable (docs/configuration.md lists them)", p.where, name)
			continue
		}
		if !slices.Contains(keyflags.Readers(key), cmd) {
			t.Errorf("%s: %s sets %s, which rdmamesh %s does not read", p.where, name, key, cmd)
		}
		env[name] = val
	}
	// Flags override the environment; as variables they validate the same way.
	flagKeys := map[string]string{}
	for key, fl := range keyflags.Flags {
		for _, f := range fl {
			if f.Cmd == cmd || f.Cmd == "" {
				flagKeys[f.Name] = key
			}
		}
	}
	configFile := ""
	lists := map[string][]string{}
	for i := 1; i < len(p.args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimPrefix(p.args[i], "--"), "=")
		if !hasVal && i+1 < len(p.args) && !strings.HasPrefix(p.args[i+1], "--") {
			val = p.args[i+1]
			i++
		}
		if name == "config" {
			configFile = val
			continue
		}
		if key, ok := flagKeys[name]; ok {
			lists[config.EnvName(key)] = append(lists[config.EnvName(key)], val)
		}
	}
	for name, vals := range lists {
		env[name] = strings.Join(vals, ",")
	}
	for _, fileKey := range []string{"gossip.key_file", "auth.token_file", "tls.cert_file", "tls.key_file", "tls.ca_file"} {
		name := config.EnvName(fileKey)
		if path := env[name]; path != "" {
			lp, ok := local(path)
			if !ok {
				t.Errorf("%s: %s=%s, but nothing is mounted there", p.where, name, path)
				continue
			}
			env[name] = lp
		}
	}
	if configFile != "" {
		lp, ok := local(configFile)
		if !ok {
			t.Errorf("%s: --config %s, but nothing is mounted there", p.where, configFile)
			return checked{}
		}
		configFile = lp
	}

	names := make([]string, 0, len(env))
	for name := range env {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Setenv(name, env[name])
	}
	c, err := config.Load(configFile, nil)
	for _, name := range names {
		os.Unsetenv(name) // t.Setenv restores at the end; later checks start clean
	}
	if err != nil {
		t.Errorf("%s: the binary would refuse to start: %v", p.where, err)
		return checked{}
	}
	// What the worker command checks after loading, before it listens.
	if cmd == "worker" {
		if _, err := inventory.ParseGIDPolicy(c.Worker.GID); err != nil {
			t.Errorf("%s: worker.gid: %v", p.where, err)
		}
		if c.Worker.Fabric == "sim" {
			faults, err := sim.ParseFaults(c.Sim.Faults)
			if err == nil {
				_, err = sim.New(sim.Config{Preset: c.Sim.Preset, Seed: c.Sim.Seed, Faults: faults, TimeScale: c.Sim.TimeScale})
			}
			if err != nil {
				t.Errorf("%s: simulated fabric: %v", p.where, err)
			}
		}
	}
	_, _, serr := c.Secrets()
	if serr == nil && (cmd == "worker" || cmd == "coordinator") {
		// The check the command runs before it listens.
		if _, err := c.Guard(cmd); err != nil {
			t.Errorf("%s: the binary would refuse to start: %v", p.where, err)
		}
	}
	return checked{cfg: c, secretsErr: serr}
}
