package deploytest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/metrics"
)

var update = flag.Bool("update", false, "rewrite the generated block of docs/operations.md")

const (
	metricsBegin = "<!-- metrics:begin"
	metricsEnd   = "<!-- metrics:end -->"
)

// The metrics table in docs/operations.md is generated from
// metrics.Reference(); this fails when they differ (fix with -update).
func TestOperationsDoc(t *testing.T) {
	path := repo(t, "docs", "operations.md")
	doc := string(read(t, "docs", "operations.md"))
	i, j := strings.Index(doc, metricsBegin), strings.Index(doc, metricsEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/operations.md lacks the %s ... %s block", metricsBegin, metricsEnd)
	}
	start := i + strings.Index(doc[i:], "-->") + len("-->\n")
	var table bytes.Buffer
	if err := metrics.WriteMarkdown(&table); err != nil {
		t.Fatal(err)
	}
	want := doc[:start] + table.String() + doc[j:]
	if want != doc {
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Log("docs/operations.md: metrics table regenerated")
		} else {
			t.Errorf("the metrics table in docs/operations.md is stale: go test ./rigs/deploytest -run TestOperationsDoc -update")
		}
	}
}

var (
	envName   = regexp.MustCompile(`\bRDMAMESH_[A-Z0-9_]+`)
	configKey = regexp.MustCompile("`((?:log|gossip|worker|sim|coordinator|sweep|demo|auth)\\.[a-z_]+)(?:[:` ])")
	repoPath  = regexp.MustCompile("`((?:deploy|docs|internal|configs)/[A-Za-z0-9_./-]+)`")
	mdLink    = regexp.MustCompile(`\]\(([^)#:]+)(?:#[^)]*)?\)`)
	fence     = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")
)

// docs are the operator-facing texts that name metrics, variables, keys,
// paths and command lines.
var docs = [][]string{
	{"docs", "operations.md"},
	{"docs", "configuration.md"},
	{"deploy", "kubernetes", "README.md"},
}

// Everything the docs name exists: metrics, RDMAMESH_* variables, config
// keys, repository paths, links, and the flags of rdmamesh command lines in
// code blocks. Prose rots silently otherwise.
func TestDocsNameRealThings(t *testing.T) {
	known := exported()
	vars := keyOfEnv()
	keys := map[string]bool{}
	for _, k := range vars {
		keys[k] = true
	}
	for _, parts := range docs {
		name := filepath.Join(parts...)
		text := string(read(t, parts...))
		for _, m := range metricName.FindAllString(text, -1) {
			if _, ok := known[m]; !ok {
				t.Errorf("%s names metric %s, which does not exist", name, m)
			}
		}
		for _, v := range envName.FindAllString(text, -1) {
			if _, ok := vars[v]; !ok && v != "RDMAMESH_" {
				t.Errorf("%s names variable %s, which sets no config key", name, v)
			}
		}
		for _, m := range configKey.FindAllStringSubmatch(text, -1) {
			if ext := filepath.Ext(m[1]); !keys[m[1]] && !slices.Contains([]string{".yaml", ".env", ".service", ".conf", ".json"}, ext) {
				t.Errorf("%s names config key %s, which does not exist", name, m[1])
			}
		}
		for _, m := range repoPath.FindAllStringSubmatch(text, -1) {
			p := strings.TrimSuffix(strings.SplitN(m[1], "*", 2)[0], "<")
			if _, err := os.Stat(repo(t, p)); err != nil {
				t.Errorf("%s names %s, which does not exist", name, m[1])
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			if _, err := os.Stat(filepath.Join(repo(t, filepath.Dir(name)), m[1])); err != nil {
				t.Errorf("%s links to %s, which does not exist", name, m[1])
			}
		}
		for _, block := range fence.FindAllStringSubmatch(text, -1) {
			for _, line := range strings.Split(strings.ReplaceAll(block[1], "\\\n", " "), "\n") {
				fields := strings.Fields(line)
				if len(fields) < 2 || fields[0] != "rdmamesh" {
					continue
				}
				if err := cli(t).CheckArgs(fields[1:]); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		}
	}
}

// The troubleshooting table quotes doctor's checks on captured trees; run
// doctor on them so the quotes stay true.
func TestTroubleshootingMatchesDoctor(t *testing.T) {
	doc := string(read(t, "docs", "operations.md"))
	for _, tc := range []struct {
		tree   string
		checks map[string]string // check name → status
	}{
		{"container-no-netdev", map[string]string{"gid:mlx5_1/1": "fail", "gid_netdevs:mlx5_0/1": "warn"}},
		{"link-layer-mismatch-down", map[string]string{"link_layers": "fail", "port_state:mlx5_0/1": "fail"}},
		{"ib-no-sm", map[string]string{"subnet_manager:mlx5_0/1": "fail"}},
	} {
		if !strings.Contains(doc, "tree `"+tc.tree+"`") {
			t.Errorf("docs/operations.md no longer cites tree %s; update this test", tc.tree)
		}
		out, _ := exec.Command(cli(t).Path, "doctor", "--json", "--sysfs-root",
			repo(t, "internal", "inventory", "testdata", tc.tree)).Output()
		var rep struct {
			Checks []struct{ Name, Status string }
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("doctor on %s: %v\n%s", tc.tree, err, out)
		}
		got := map[string]string{}
		for _, c := range rep.Checks {
			got[c.Name] = c.Status
		}
		for name, status := range tc.checks {
			if got[name] != status {
				t.Errorf("doctor on %s: %s is %q, the docs say %s", tc.tree, name, got[name], status)
			}
			kind, _, _ := strings.Cut(name, ":")
			if !strings.Contains(doc, status+" "+kind) {
				t.Errorf("docs/operations.md does not quote %q", status+" "+kind)
			}
		}
	}
}
