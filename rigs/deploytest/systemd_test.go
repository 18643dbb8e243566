package deploytest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/internal/testkit/tlstest"
)

// unit is a parsed systemd unit or drop-in: section → key → values in
// order (keys like Environment= may repeat).
type unit map[string]map[string][]string

func parseUnit(t *testing.T, data []byte) unit {
	t.Helper()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("line %d: %q is not Key=Value inside a section", n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

func (u unit) get(section, key string) string {
	v := u[section][key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// parseEnvFile reads KEY=value lines; with commented, the documented but
// commented-out ones (#KEY=value) count too, since they are meant to work
// when enabled.
func parseEnvFile(data []byte, commented bool) map[string]string {
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if commented {
			line = strings.TrimPrefix(line, "#")
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.ContainsAny(k, " #") || k == "" {
			continue
		}
		env[k] = v
	}
	return env
}

const credDir = "/run/credentials/rdmamesh.service"

func TestSystemdUnits(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	tlsUnit := parseUnit(t, read(t, "deploy", "systemd", "tls.conf"))
	files := map[string]string{credDir + "/gossip.key": key, credDir + "/token": "s3cret-token"}
	ca := tlstest.NewCA(t, "rdmamesh")
	node := ca.Issue(t, "node")
	for cred, path := range map[string]string{"tls.pem": node.CertFile, "tls.key": node.KeyFile, "ca.pem": ca.File} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[credDir+"/"+cred] = string(b)
	}
	for _, tc := range []struct {
		role, env string
		memlock   bool
	}{
		{"worker", "worker.env", true},
		{"coordinator", "coordinator.env", false},
	} {
		t.Run(tc.role, func(t *testing.T) {
			u := parseUnit(t, read(t, "deploy", "systemd", "rdmamesh-"+tc.role+".service"))
			// Secure without any drop-in: the unit itself loads the files
			// `rdmamesh keygen` writes by default.
			for _, want := range []string{"token:" + filepath.Join(config.SecretsDir, config.TokenFileName),
				"gossip.key:" + filepath.Join(config.SecretsDir, config.KeyFileName)} {
				if !slices.Contains(u["Service"]["LoadCredential"], want) {
					t.Errorf("no LoadCredential=%s: the unit must read keygen's files itself", want)
				}
			}
			if u.get("Service", "Restart") != "on-failure" {
				t.Error("Restart=on-failure: a crashed agent must come back")
			}
			envFile := u.get("Service", "EnvironmentFile")
			if strings.TrimPrefix(envFile, "-") != "/etc/rdmamesh/"+tc.env {
				t.Errorf("EnvironmentFile=%s, want /etc/rdmamesh/%s (the documented install path)", envFile, tc.env)
			}
			hasLock := slices.Contains(strings.Fields(u.get("Service", "AmbientCapabilities")), "CAP_IPC_LOCK")
			if tc.memlock && (u.get("Service", "LimitMEMLOCK") != "infinity" || !hasLock) {
				t.Error("the worker pins memory for RDMA: LimitMEMLOCK=infinity and AmbientCapabilities=CAP_IPC_LOCK")
			}
			if !tc.memlock && hasLock {
				t.Error("the coordinator does no RDMA and needs no CAP_IPC_LOCK")
			}
			if tc.memlock && u.get("Service", "PrivateDevices") == "yes" {
				t.Error("PrivateDevices=yes hides /dev/infiniband from the worker")
			}
			argv := strings.Fields(u.get("Service", "ExecStart"))
			if len(argv) < 2 || argv[0] != "/usr/local/bin/rdmamesh" || argv[1] != tc.role {
				t.Fatalf("ExecStart=%v", argv)
			}
			args := argv[1:]
			for i, a := range args {
				// systemd sets $STATE_DIRECTORY from StateDirectory=.
				if strings.Contains(a, "${STATE_DIRECTORY}") {
					sd := u.get("Service", "StateDirectory")
					if sd == "" {
						t.Errorf("%s uses ${STATE_DIRECTORY} without StateDirectory=", a)
					}
					args[i] = strings.ReplaceAll(a, "${STATE_DIRECTORY}", "/var/lib/"+sd)
				}
			}
			data := read(t, "deploy", "systemd", tc.env)
			for _, commented := range []bool{false, true} {
				for _, dropins := range [][]unit{{u}, {u, tlsUnit}} {
					env := parseEnvFile(data, commented)
					for _, d := range dropins {
						for _, e := range d["Service"]["Environment"] {
							k, v, _ := strings.Cut(e, "=")
							env[k] = strings.ReplaceAll(v, "%d", credDir)
						}
					}
					got := check(t, process{where: tc.role + " unit", args: args, env: env, files: files})
					if got.cfg != nil && got.secretsErr != nil {
						t.Errorf("secrets through credentials: %v", got.secretsErr)
					}
				}
			}
			for _, d := range []unit{u, tlsUnit} {
				for _, lc := range d["Service"]["LoadCredential"] {
					id, _, _ := strings.Cut(lc, ":")
					if !slices.ContainsFunc(d["Service"]["Environment"], func(e string) bool {
						return strings.HasSuffix(e, "%d/"+id)
					}) {
						t.Errorf("credential %s is loaded but no variable points at it", id)
					}
				}
			}
		})
	}
}

// systemd's own checker, when installed: unknown keys and bad values are
// only warnings at load time, so any output about our file fails the test.
func TestSystemdAnalyzeVerify(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed; units checked by the parser above")
	}
	bin := cli(t).Path
	dir := t.TempDir()
	var units []string
	for _, name := range []string{"rdmamesh-worker.service", "rdmamesh-coordinator.service"} {
		// verify insists the ExecStart binary exists; point it at the
		// freshly built one.
		body := strings.ReplaceAll(string(read(t, "deploy", "systemd", name)), "/usr/local/bin/rdmamesh", bin)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		units = append(units, p)
	}
	out, err := exec.Command(sa, append([]string{"verify"}, units...)...).CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, dir) {
			t.Errorf("systemd-analyze: %s", line)
		}
	}
	if err != nil && !strings.Contains(string(out), dir) {
		// A failure unrelated to our files (no D-Bus in a container, say)
		// is the environment's, not the units'.
		t.Logf("systemd-analyze verify: %v\n%s", err, out)
	}
}
