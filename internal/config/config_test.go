package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultsValidate(t *testing.T) {
	c, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Coordinator.PairTimeout != 10*time.Second || c.Sweep.Mode != "full" {
		t.Fatalf("defaults not applied: %+v", c)
	}
}

func TestEveryFieldHasADefault(t *testing.T) {
	d := Defaults()
	for _, k := range Fields() {
		if _, ok := d[k]; !ok {
			t.Errorf("key %s has no default: env vars would never reach it", k)
		}
	}
	if len(Fields()) != len(d) {
		t.Errorf("%d fields but %d defaults", len(Fields()), len(d))
	}
}

func TestEnvOverrides(t *testing.T) {
	t.Setenv("RDMAMESH_COORDINATOR_PAIR_TIMEOUT", "3s")
	t.Setenv("RDMAMESH_WORKER_FABRIC", "sim")
	c, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Coordinator.PairTimeout != 3*time.Second || c.Worker.Fabric != "sim" {
		t.Fatalf("env ignored: %v %v", c.Coordinator.PairTimeout, c.Worker.Fabric)
	}
}

func TestExampleConfigsLoad(t *testing.T) {
	files, _ := filepath.Glob("../../configs/*.yaml")
	if len(files) == 0 {
		t.Fatal("no example configs found in configs/")
	}
	for _, f := range files {
		if _, err := Load(f, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestBadConfigs loads every configs/testdata/*.bad.yaml; the first line of
// each is a comment "# want: TEXT" naming what the error must mention.
func TestBadConfigs(t *testing.T) {
	files, _ := filepath.Glob("../../configs/testdata/*.bad.yaml")
	if len(files) < 5 {
		t.Fatalf("only %d bad configs found", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(raw), "\n")
			want, ok := strings.CutPrefix(first, "# want: ")
			if !ok {
				t.Fatalf("first line must be '# want: ...', got %q", first)
			}
			_, err = Load(f, nil)
			if err == nil {
				t.Fatalf("loaded without error")
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not mention %q", err, want)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte("MDEyMzQ1Njc4OWFiY2RlZg==\n"), 0o600); err != nil { // 16 bytes
		t.Fatal(err)
	}
	c := &Config{Auth: Auth{TokenFile: tokenFile}, Gossip: Gossip{KeyFile: keyFile}}
	tok, key, err := c.Secrets()
	if err != nil || tok != "s3cret" || len(key) != 16 {
		t.Fatalf("got %q %d %v", tok, len(key), err)
	}
	for name, bad := range map[string]*Config{
		"missing file": {Auth: Auth{TokenFile: filepath.Join(dir, "nope")}},
		"not base64":   {Gossip: Gossip{Key: "!!!"}},
		"short key":    {Gossip: Gossip{Key: "c2hvcnQ="}},
	} {
		if _, _, err := bad.Secrets(); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "c2hvcnQ") {
			t.Errorf("%s: error echoes the secret: %v", name, err)
		}
	}
}

func TestLabelsFromEnv(t *testing.T) {
	t.Setenv("RDMAMESH_WORKER_LABELS", "rack=r1, leaf=l3")
	c, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Worker.Labels) != 2 || c.Worker.Labels["rack"] != "r1" || c.Worker.Labels["leaf"] != "l3" {
		t.Fatalf("labels from env: %v", c.Worker.Labels)
	}
	t.Setenv("RDMAMESH_WORKER_LABELS", "rack")
	if _, err := Load("", nil); err == nil || !strings.Contains(err.Error(), "worker.labels") || !strings.Contains(err.Error(), "key=value") {
		t.Fatalf("a label without = must be refused naming the key and the form, got %v", err)
	}
}

// A value that does not decode names the key, the value and the variable
// (or file) it came from, and what would be accepted.
func TestBadEnvValueNamesTheVariable(t *testing.T) {
	for _, tc := range []struct {
		env, val string
		want     []string
	}{
		{"RDMAMESH_COORDINATOR_PAIR_TIMEOUT", "banana", []string{"coordinator.pair_timeout", `"banana"`, "RDMAMESH_COORDINATOR_PAIR_TIMEOUT", "10s"}},
		{"RDMAMESH_DEMO_NODES", "many", []string{"demo.nodes", `"many"`, "RDMAMESH_DEMO_NODES", "whole number"}},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv(tc.env, tc.val)
			_, err := Load("", nil)
			if err == nil {
				t.Fatalf("%s=%s loaded", tc.env, tc.val)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
