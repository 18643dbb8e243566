package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

func keygenRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"keygen"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func readFiles(t *testing.T, dir string) string {
	t.Helper()
	var s string
	for _, name := range []string{config.TokenFileName, config.KeyFileName} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		s += string(b)
	}
	return s
}

func TestKeygen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	code, out, errOut := keygenRun(t, "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	tok, key := filepath.Join(dir, "token"), filepath.Join(dir, "gossip.key")
	for _, want := range []string{"--token-file " + tok + " --gossip-key-file " + key, "every coordinator and worker",
		"auth.token_file", "gossip.key_file", "scp -p"} {
		if !strings.Contains(out, want) {
			t.Errorf("next steps lack %q:\n%s", want, out)
		}
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("directory: %v %v, want mode 0700", st.Mode(), err)
	}
	for _, p := range []string{tok, key} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", p, st.Mode(), err)
		}
	}
	first := readFiles(t, dir)

	code, _, errOut = keygenRun(t, "--dir", dir)
	if code != 2 || !strings.Contains(errOut, "refusing to overwrite") || !strings.Contains(errOut, "--force") {
		t.Errorf("second run: exit %d, %q; want 2 refusing, naming --force", code, errOut)
	}
	if code, _, errOut = keygenRun(t, "--dir", dir, "--if-missing"); code != 0 {
		t.Errorf("--if-missing with both files: exit %d %s", code, errOut)
	}
	if readFiles(t, dir) != first {
		t.Fatal("a refused or --if-missing run changed the files")
	}
	if code, _, errOut = keygenRun(t, "--dir", dir, "--force"); code != 0 {
		t.Fatalf("--force: exit %d %s", code, errOut)
	}
	if readFiles(t, dir) == first {
		t.Error("--force kept the old secrets")
	}
	for _, p := range []string{tok, key} {
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
			t.Errorf("%s after --force: mode %v", p, st.Mode())
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	os.Remove(key)
	if code, _, _ = keygenRun(t, "--dir", dir, "--if-missing"); code != 2 {
		t.Errorf("--if-missing with half a pair: exit %d, want 2 (a new key would not match the token elsewhere)", code)
	}
}

// The files keygen writes are what the loaders accept, and with them a
// worker and a coordinator on loopback find each other over encrypted
// gossip, and the API refuses a sweep without the token.
func TestKeygenSecretsRunAPair(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := keygenRun(t, "--dir", dir, "--force"); code != 0 {
		t.Fatalf("keygen: %s", errOut)
	}
	tok, key := filepath.Join(dir, "token"), filepath.Join(dir, "gossip.key")
	c := &config.Config{Auth: config.Auth{TokenFile: tok}, Gossip: config.Gossip{KeyFile: key}}
	token, k, err := c.Secrets()
	if err != nil || len(token) < 32 || len(k) != config.KeyBytes {
		t.Fatalf("loaders: token %d chars, key %d bytes, %v", len(token), len(k), err)
	}
	secrets := []string{"--token-file", tok, "--gossip-key-file", key}
	co := startDaemon(t, append([]string{"coordinator", "--name", "c1", "--gossip-bind", "127.0.0.1:0",
		"--api-listen", "127.0.0.1:0"}, secrets...)...)
	gossip := co.waitRecord(t, "coordinator up")["gossip"].(string)
	url := co.waitRecord(t, "API and UI")["url"].(string)
	startDaemon(t, append([]string{"worker", "--name", "node-01", "--fabric", "sim", "--sim-time-scale", "0",
		"--gossip-bind", "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--join", gossip}, secrets...)...)

	call := func(method, path, token string) (int, string) {
		req, _ := http.NewRequest(method, strings.TrimSuffix(url, "/")+path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(resp.Body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b.String()
	}
	wait.Until(t, 30*time.Second, "the worker to show up in /api/v1/nodes", func() error {
		code, body := call(http.MethodGet, "/api/v1/nodes", token)
		if code == http.StatusOK && strings.Contains(body, "node-01") {
			return nil
		}
		return fmt.Errorf("%d %s\ncoordinator:\n%s", code, body, co.log.String())
	})
	if code, _ := call(http.MethodPost, "/api/v1/sweeps", ""); code != http.StatusUnauthorized {
		t.Errorf("POST /api/v1/sweeps without the token: %d, want 401", code)
	}
}
