package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/config"
)

// The example a user copies must not start open: configs/coordinator.yaml,
// as shipped, either binds loopback only or is refused without the
// secrets, by the check the command runs and by the command itself.
func TestShippedCoordinatorConfigIsSafe(t *testing.T) {
	file := filepath.Join("..", "..", "configs", "coordinator.yaml")
	c, err := config.Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Guard("coordinator")
	var refused *config.ExposedError
	switch {
	case errors.As(err, &refused):
	case err != nil:
		t.Fatal(err)
	case len(g.Open) == 0:
		return
	case g.Token != "" && g.Key != nil:
		// This host has the files the example names: it is secured.
		t.Skipf("%s and %s exist here; the example starts secured", c.Auth.TokenFile, c.Gossip.KeyFile)
	default:
		t.Fatalf("%s starts open: listeners %v, missing %v", file, g.Open, g.Missing)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"coordinator", "--config", file, "--data-dir", t.TempDir()}, &stdout, &stderr)
	if code != 2 {
		t.Fatalf("exit %d, want 2 (refused)\n%s", code, stderr.String())
	}
	for _, want := range []string{"refusing to start", "coordinator.api_listen 0.0.0.0:8080", "gossip.bind 0.0.0.0:7946",
		"auth.token", "gossip.key", "rdmamesh keygen --dir /etc/rdmamesh", "--insecure"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("refusal lacks %q:\n%s", want, stderr.String())
		}
	}
}

// Gossip without a key on a non-loopback bind: refused, unless --insecure,
// which starts and says in the log what is open. Each role also says in its
// own words what it waits for when it has no seeds.
func TestGossipWithoutKeyNeedsInsecure(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		role, up, alone, notAlone string
		args                      []string
	}{
		{"worker", "worker up", "no gossip seeds (--join): this worker waits for a coordinator", "this coordinator",
			[]string{"--fabric", "sim", "--sim-time-scale", "0"}},
		{"coordinator", "coordinator up", "no gossip seeds (--join): this coordinator waits for workers", "this worker", nil},
	} {
		t.Run(tc.role, func(t *testing.T) {
			// ":0" is every interface; advertising loopback keeps all
			// traffic on this host.
			args := append([]string{tc.role, "--gossip-bind", ":0", "--gossip-advertise", "127.0.0.1:0",
				"--api-listen", "127.0.0.1:0", "--token-file", token}, tc.args...)
			var stdout, stderr bytes.Buffer
			if code := run(args, &stdout, &stderr); code != 2 {
				t.Fatalf("exit %d without a gossip key, want 2\n%s", code, stderr.String())
			}
			for _, want := range []string{"refusing to start: this " + tc.role, "without gossip.key",
				"gossip.bind :0 (all interfaces)", "gossip.key (not set)", "rdmamesh keygen", "--gossip-key-file"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("refusal lacks %q:\n%s", want, stderr.String())
				}
			}

			d := startDaemon(t, append(args, "--insecure")...)
			w := d.waitRecord(t, "insecure")
			if w["level"] != "WARN" || !strings.Contains(w["open"].(string), "gossip.bind :0 (all interfaces)") ||
				!strings.Contains(w["missing"].(string), "gossip.key") {
				t.Errorf("insecure warning %v: want WARN naming gossip.bind and gossip.key", w)
			}
			d.waitRecord(t, tc.up)
			d.waitRecord(t, tc.alone)
			if err := d.stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
			if strings.Contains(d.log.String(), tc.notAlone) {
				t.Errorf("the %s logs the other role's message:\n%s", tc.role, d.log.String())
			}
		})
	}
}
