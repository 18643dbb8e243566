package deploytest

import (
	"context"
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/rdmamesh/rdmamesh/internal/config"
)

// loadCompose loads docker-compose.yml the way `docker compose` does
// (schema validation, anchors and merge keys, interpolation, profiles).
// No container engine runs in CI; this is the check that it would start.
func loadCompose(t *testing.T, profiles ...string) *types.Project {
	t.Helper()
	path := repo(t, "docker-compose.yml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	details := types.ConfigDetails{
		WorkingDir:  repo(t),
		ConfigFiles: []types.ConfigFile{{Filename: path, Content: data}},
		// An empty environment: the file must not depend on the caller's.
		Environment: types.Mapping{},
	}
	p, err := loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("rdmamesh", true)
		o.Profiles = profiles
	})
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return p
}

func TestComposeLoaderIsStrict(t *testing.T) {
	dir := t.TempDir()
	bad := []byte("services:\n  x:\n    image: rdmamesh:dev\n    comand: [worker]\n")
	details := types.ConfigDetails{WorkingDir: dir, ConfigFiles: []types.ConfigFile{{Filename: "bad.yml", Content: bad}},
		Environment: types.Mapping{}}
	if _, err := loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("x", true)
	}); err == nil {
		t.Fatal("the loader accepted a misspelled service key; the compose test would prove nothing")
	}
}

func envOf(s types.ServiceConfig) map[string]string {
	out := map[string]string{}
	for k, v := range s.Environment {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

func TestCompose(t *testing.T) {
	p := loadCompose(t)
	if _, err := os.Stat(repo(t, "Dockerfile")); err != nil {
		t.Fatal(err)
	}
	var coords, workers []string
	cfgs := map[string]*config.Config{}
	secrets := composeSecrets(t, p)
	for name, s := range p.Services {
		if s.Image != "rdmamesh:dev" || s.Build == nil || s.Build.Context != repo(t) {
			t.Errorf("%s: image %q, build %+v: every service runs the repository's image", name, s.Image, s.Build)
		}
		if len(s.Command) == 0 {
			t.Errorf("%s: no command", name)
			continue
		}
		got := check(t, process{where: "compose " + name, args: s.Command, env: envOf(s), files: secrets.files(t, s)})
		if got.cfg == nil {
			continue
		}
		if got.secretsErr != nil {
			t.Errorf("%s: %v", name, got.secretsErr)
		}
		cfgs[name] = got.cfg
		// memberlist takes only an IP as its advertise address; left empty,
		// it advertises the container's IP.
		if a := got.cfg.Gossip.Advertise; a != "" {
			if h, _ := hostPort(t, "gossip.advertise", a); net.ParseIP(h) == nil {
				t.Errorf("%s: gossip advertise %q is a name; memberlist refuses it at startup", name, a)
			}
		}
		switch s.Command[0] {
		case "coordinator":
			coords = append(coords, name)
		case "worker":
			workers = append(workers, name)
		}
	}
	sort.Strings(coords)
	sort.Strings(workers)
	if len(coords) != 3 || len(workers) != 4 {
		t.Fatalf("coordinators %v, workers %v: want 3 and 4", coords, workers)
	}
	names := map[string]string{}
	for _, n := range append(slices.Clone(coords), workers...) {
		c := cfgs[n]
		name := c.Coordinator.Name
		if slices.Contains(workers, n) {
			name = c.Worker.Name
		}
		if name == "" || names[name] != "" {
			t.Errorf("%s: node name %q empty or shared with %s", n, name, names[name])
		}
		names[name] = n
	}
	for _, n := range coords {
		checkComposeCoordinator(t, p, n, cfgs[n], len(coords))
	}
	for _, n := range workers {
		c := cfgs[n]
		if c.Worker.Fabric != "sim" {
			t.Errorf("%s: fabric %q; there are no HCAs in containers here", n, c.Worker.Fabric)
		}
		checkSeeds(t, n, c.Gossip.Join, coords, cfgs)
		for _, other := range workers {
			if o := cfgs[other]; o.Sim.Seed != c.Sim.Seed || strings.Join(o.Sim.Faults, ",") != strings.Join(c.Sim.Faults, ",") {
				t.Errorf("%s and %s simulate different fabrics: every worker needs the same seed and faults", n, other)
			}
		}
	}
}

func checkComposeCoordinator(t *testing.T, p *types.Project, name string, c *config.Config, n int) {
	t.Helper()
	s := p.Services[name]
	if c.Coordinator.BootstrapExpect != n {
		t.Errorf("%s: bootstrap_expect %d, but the file runs %d coordinators", name, c.Coordinator.BootstrapExpect, n)
	}
	host, port := hostPort(t, "raft_advertise", c.Coordinator.RaftAdvertise)
	_, bindPort := hostPort(t, "raft_bind", c.Coordinator.RaftBind)
	if host != name || port != bindPort {
		t.Errorf("%s: raft_advertise %q, want %s:%s (its own service name, the raft_bind port)", name, c.Coordinator.RaftAdvertise, name, bindPort)
	}
	vol := false
	for _, v := range s.Volumes {
		vol = vol || (v.Type == types.VolumeTypeVolume && v.Target == c.Coordinator.DataDir)
	}
	if c.Coordinator.DataDir == "" || !vol {
		t.Errorf("%s: data_dir %q is not a named volume: raft state would die with the container", name, c.Coordinator.DataDir)
	}
	_, apiPort := hostPort(t, "api_listen", c.Coordinator.APIListen)
	published := false
	for _, pc := range s.Ports {
		published = published || strconv.Itoa(int(pc.Target)) == apiPort
	}
	if !published {
		t.Errorf("%s: API port %s not published; the UI would be unreachable", name, apiPort)
	}
	checkSeeds(t, name, c.Gossip.Join, nil, nil)
}

// checkSeeds: every gossip seed is a coordinator service on its gossip port.
func checkSeeds(t *testing.T, name string, join, coords []string, cfgs map[string]*config.Config) {
	t.Helper()
	if len(join) == 0 {
		t.Errorf("%s joins no one", name)
	}
	for _, seed := range join {
		h, port := hostPort(t, "gossip.join", seed)
		if !strings.HasPrefix(h, "coordinator-") {
			t.Errorf("%s: seed %s is not a coordinator service", name, seed)
		}
		if c, ok := cfgs[h]; ok {
			if _, bp := hostPort(t, "gossip.bind", c.Gossip.Bind); bp != port {
				t.Errorf("%s: seed %s, but %s binds gossip on port %s", name, seed, h, bp)
			}
		} else if coords != nil {
			t.Errorf("%s: seed %s is not a service of the file", name, seed)
		}
	}
}

func TestComposeGate(t *testing.T) {
	if _, ok := loadCompose(t).Services["gate"]; ok {
		t.Error("the gate would run (and exit) with every `docker compose up`; keep it behind a profile")
	}
	p := loadCompose(t, "tools")
	s, ok := p.Services["gate"]
	if !ok {
		t.Fatal("no gate service in the tools profile")
	}
	if err := cli(t).CheckArgs(s.Command); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(argValues(s.Command)["coordinator"])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Services[u.Hostname()]; !ok || u.Port() != "8080" {
		t.Errorf("gate --coordinator %s: not a coordinator service's API", u)
	}
	// The coordinators take no sweep without the token.
	if tf := argValues(s.Command)["token-file"]; composeSecrets(t, p).files(t, s)[tf] == "" {
		t.Errorf("gate --token-file %q: not keygen's token mounted in the gate", tf)
	}
}
