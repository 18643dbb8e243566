package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"":               false, // not even host:port: never trusted
		":8080":          false, // empty host: all interfaces
		"0.0.0.0:8080":   false,
		"[::]:7946":      false,
		"127.0.0.1:8080": true,
		"127.0.0.2:8080": true,
		"[::1]:8080":     true,
		"localhost:8080": true,
		"LocalHost:0":    true,
		"10.1.2.3:8080":  false,
		"node-1:7946":    false, // a name may resolve anywhere
		"[fe80::1]:7946": false,
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// Guard is the check the worker and coordinator commands run before they
// listen; each case names the role, what it binds and what it has.
func TestGuard(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, KeyFileName)
	if err := os.WriteFile(key, []byte("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	loop := func(c *Config) {
		c.Gossip.Bind, c.Worker.APIListen, c.Coordinator.APIListen = "127.0.0.1:0", "127.0.0.1:0", "[::1]:0"
	}
	for _, tc := range []struct {
		name, role string
		set        func(*Config)
		refused    []string // in the error; nil: starts
		exposed    bool     // starts, but open (insecure)
	}{
		{"defaults, no secrets", "coordinator", func(*Config) {},
			[]string{"this coordinator", "coordinator.api_listen 0.0.0.0:8080 (all interfaces)", "gossip.bind 0.0.0.0:7946",
				"auth.token (not set)", "gossip.key (not set)", "rdmamesh keygen --dir /etc/rdmamesh",
				"--token-file /etc/rdmamesh/token --gossip-key-file /etc/rdmamesh/gossip.key", "--insecure"}, false},
		{"loopback only", "coordinator", loop, nil, false},
		{"loopback worker", "worker", loop, nil, false},
		{"raft beyond loopback", "coordinator", func(c *Config) { loop(c); c.Coordinator.RaftBind = "10.0.0.1:8300" },
			[]string{"coordinator.raft_bind 10.0.0.1:8300"}, false},
		{"gossip on a name, token only", "worker", func(c *Config) {
			loop(c)
			c.Gossip.Bind, c.Auth.Token = "node-1:7946", "t"
		}, []string{"this worker", "without gossip.key", "gossip.bind node-1:7946", "HCAs"}, false},
		{"both secrets", "worker", func(c *Config) { c.Auth.Token, c.Gossip.KeyFile = "t", key }, nil, false},
		{"insecure", "worker", func(c *Config) { c.Auth.Insecure = true }, nil, true},
		{"example files missing", "coordinator", func(c *Config) {
			c.Auth.TokenFile, c.Gossip.KeyFile = filepath.Join(dir, "x", TokenFileName), filepath.Join(dir, "x", KeyFileName)
		}, []string{"auth.token_file " + filepath.Join(dir, "x", TokenFileName) + " does not exist",
			"rdmamesh keygen --dir " + filepath.Join(dir, "x"), "this configuration reads them"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load("", nil)
			if err != nil {
				t.Fatal(err)
			}
			tc.set(c)
			g, err := c.Guard(tc.role)
			if tc.refused == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if g.Exposed() != tc.exposed {
					t.Fatalf("Exposed() = %v, want %v (open %v, missing %v)", g.Exposed(), tc.exposed, g.Open, g.Missing)
				}
				return
			}
			var e *ExposedError
			if !errors.As(err, &e) {
				t.Fatalf("want a refusal, got %v", err)
			}
			for _, w := range tc.refused {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// A missing secret file on loopback is still an error: the operator asked
// for a file, and it says how to make one.
func TestGuardMissingFileOnLoopback(t *testing.T) {
	c := &Config{Gossip: Gossip{Bind: "127.0.0.1:0"}, Worker: Worker{APIListen: "127.0.0.1:0"},
		Auth: Auth{TokenFile: filepath.Join(t.TempDir(), "token")}}
	_, err := c.Guard("worker")
	if err == nil || !strings.Contains(err.Error(), "rdmamesh keygen") {
		t.Fatalf("got %v", err)
	}
}
