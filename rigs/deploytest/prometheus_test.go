package deploytest

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

type ruleFile struct {
	Groups []ruleGroup `json:"groups"`
}

type ruleGroup struct {
	Name     string `json:"name"`
	Interval string `json:"interval,omitempty"`
	Rules    []rule `json:"rules"`
}

type rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PrometheusRule is the Prometheus Operator's CRD, as much of it as the
// example uses (strict decoding rejects anything else).
type PrometheusRule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec ruleFile `json:"spec"`
}

func init() {
	kinds["monitoring.coreos.com/v1/PrometheusRule"] = func() any { return &PrometheusRule{} }
}

// needTool finds a program from Debian's packages: missing on a developer
// machine it skips, in CI (which installs it) it fails.
func needTool(tb testing.TB, name, pkg string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s not installed: .ci/run must install Debian's %s package", name, pkg)
	}
	tb.Skipf("%s not installed (apt-get install %s)", name, pkg)
	return ""
}

// The shipped rules name only metrics rdmamesh exports, the Operator's copy
// carries the same groups, and Debian's promtool accepts the file and
// passes its unit tests (alerts fire when they should, with the text
// operators will read).
func TestPrometheusRules(t *testing.T) {
	raw := read(t, "deploy", "prometheus", "rdmamesh-rules.yaml")
	var rf ruleFile
	if err := strict(raw, &rf); err != nil {
		t.Fatalf("rdmamesh-rules.yaml: %v", err)
	}
	known := exported()
	alerts := map[string]bool{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if alerts[r.Alert] {
				t.Errorf("alert %s defined twice", r.Alert)
			}
			alerts[r.Alert] = true
			names := metricName.FindAllString(r.Expr, -1)
			if len(names) == 0 {
				t.Errorf("%s: %q uses no rdmamesh metric", r.Alert, r.Expr)
			}
			for _, n := range names {
				if _, ok := known[n]; !ok {
					t.Errorf("%s: %s is not a metric rdmamesh exports", r.Alert, n)
				}
			}
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("%s: needs a severity label and a summary", r.Alert)
			}
		}
	}
	for _, must := range []string{"RDMAFabricUnhealthy", "RDMALiveSuspect", "RDMALiveLoss", "RDMALiveProbingStale"} {
		if !alerts[must] {
			t.Errorf("no alert %s", must)
		}
	}

	var pr PrometheusRule
	if err := strict(read(t, "deploy", "kubernetes", "examples", "prometheusrule.yaml"), &pr); err != nil {
		t.Fatalf("prometheusrule.yaml: %v", err)
	}
	if !reflect.DeepEqual(pr.Spec, rf) {
		t.Error("deploy/kubernetes/examples/prometheusrule.yaml and deploy/prometheus/rdmamesh-rules.yaml differ: regenerate the manifest's spec from the rules file")
	}

	promtool := needTool(t, "promtool", "prometheus")
	dir := repo(t, "deploy", "prometheus")
	for _, args := range [][]string{{"check", "rules", "rdmamesh-rules.yaml"}, {"test", "rules", "rdmamesh-rules.test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// The example's document decodes like every other manifest, so a typo in
// a field name fails here rather than in the user's cluster.
func TestPrometheusRuleDecodes(t *testing.T) {
	objs, err := decodeAll("examples/prometheusrule.yaml", read(t, "deploy", "kubernetes", "examples", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("%d documents, want 1", len(objs))
	}
	if pr, ok := objs[0].obj.(*PrometheusRule); !ok || pr.Metadata.Namespace != "rdmamesh" {
		t.Errorf("decoded %T, want a PrometheusRule in the rdmamesh namespace", objs[0].obj)
	}
}
