package metrics

import (
	"fmt"
	"io"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Spec documents one metric. The collectors build their descriptors from
// these, so the reference in docs/operations.md cannot name a metric, a label
// or a type the code does not export.
type Spec struct {
	Name   string
	Type   string // counter | gauge | histogram
	Labels []string
	Help   string
	Series string // how many series, for capacity planning
	Role   string // coordinator | worker | both
}

const (
	typeCounter   = "counter"
	typeGauge     = "gauge"
	typeHistogram = "histogram"
)

// def is a Spec with its descriptor.
type def struct {
	Spec
	desc *prometheus.Desc
}

func newDef(s Spec) *def {
	return &def{Spec: s, desc: prometheus.NewDesc(s.Name, s.Help, s.Labels, nil)}
}

// metric builds one constant sample; a label count mismatch is a bug in this
// package, caught by the tests, hence Must.
func (d *def) metric(v float64, labels ...string) prometheus.Metric {
	vt := prometheus.GaugeValue
	if d.Type == typeCounter {
		vt = prometheus.CounterValue
	}
	return prometheus.MustNewConstMetric(d.desc, vt, v, labels...)
}

// Reference lists every metric rdmamesh exports, in documentation order.
func Reference() []Spec {
	var out []Spec
	for _, group := range [][]*def{commonDefs, coordDefs, liveDefs, workerDefs} {
		for _, d := range group {
			out = append(out, d.Spec)
		}
	}
	return out
}

// WriteMarkdown writes the metrics reference table that docs/operations.md
// embeds; rigs/deploytest fails when the two differ.
func WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| metric | type | labels | series | meaning |\n|---|---|---|---|---|\n")
	role := ""
	for _, s := range Reference() {
		if s.Role != role {
			role = s.Role
			fmt.Fprintf(&b, "| **%s** | | | | |\n", role)
		}
		labels := "–"
		if len(s.Labels) > 0 {
			labels = "`" + strings.Join(s.Labels, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", s.Name, s.Type, labels, s.Series, s.Help)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// commonDefs are exported by every role.
var (
	defBuildInfo = newDef(Spec{Name: "rdmamesh_build_info", Type: typeGauge, Role: "both",
		Labels: []string{"role", "version", "commit", "goversion"}, Series: "1",
		Help: "Always 1; the labels say which build runs in which role."})

	commonDefs = []*def{defBuildInfo}
)

// BuildInfo is a collector for rdmamesh_build_info. cmd/rdmamesh passes the
// version and commit it was linked with (-ldflags -X).
func BuildInfo(role, version, commit, goVersion string) prometheus.Collector {
	return constCollector{defBuildInfo.metric(1, role, version, commit, goVersion)}
}

type constCollector []prometheus.Metric

func (c constCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c {
		ch <- m.Desc()
	}
}

func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}
