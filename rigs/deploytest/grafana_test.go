package deploytest

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/metrics"
)

type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query string `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID          int    `json:"id"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	GridPos     struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr       string `json:"expr"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
	} `json:"targets"`
}

var metricName = regexp.MustCompile(`\brdmamesh_[a-z0-9_]+`)

// exported maps every series name the collectors can produce to its metric.
func exported() map[string]string {
	out := map[string]string{}
	for _, s := range metrics.Reference() {
		out[s.Name] = s.Name
		if s.Type == "histogram" {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				out[s.Name+suffix] = s.Name
			}
		}
	}
	return out
}

// The dashboard queries only metrics that exist: a renamed metric would
// otherwise leave a panel silently empty.
func TestGrafanaDashboard(t *testing.T) {
	var d dashboard
	if err := json.Unmarshal(read(t, "deploy", "grafana", "rdmamesh-dashboard.json"), &d); err != nil {
		t.Fatal(err)
	}
	if d.Title == "" || d.UID == "" {
		t.Error("dashboard needs a title and a uid (provisioning keys on the uid)")
	}
	dsVar := ""
	for _, v := range d.Templating.List {
		if v.Type == "datasource" && v.Query == "prometheus" {
			dsVar = "${" + v.Name + "}"
		}
	}
	if dsVar == "" {
		t.Fatal("no Prometheus datasource variable: the dashboard would be tied to one Grafana's datasource uid")
	}
	known := exported()
	used := map[string]bool{}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Description == "" {
			t.Errorf("panel %q has no description", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		if p.Datasource == nil || p.Datasource.UID != dsVar {
			t.Errorf("panel %q: datasource must be %s", p.Title, dsVar)
		}
		for _, tg := range p.Targets {
			if tg.Datasource == nil || tg.Datasource.UID != dsVar {
				t.Errorf("panel %q: a target's datasource must be %s", p.Title, dsVar)
			}
			names := metricName.FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %q uses no rdmamesh metric", p.Title, tg.Expr)
			}
			for _, n := range names {
				m, ok := known[n]
				if !ok {
					t.Errorf("panel %q: %s is not a metric rdmamesh exports", p.Title, n)
				}
				used[m] = true
			}
			if strings.Count(tg.Expr, "(") != strings.Count(tg.Expr, ")") {
				t.Errorf("panel %q: unbalanced parentheses in %q", p.Title, tg.Expr)
			}
		}
	}
	// Not every metric needs a panel, but the headline ones do.
	for _, must := range []string{"rdmamesh_fabric_healthy", "rdmamesh_suspect_bad_cells", "rdmamesh_sweep_cells_done",
		"rdmamesh_pair_latency_p50_seconds", "rdmamesh_pair_bandwidth_bytes_per_second", "rdmamesh_members",
		"rdmamesh_raft_state", "rdmamesh_worker_tests_total", "rdmamesh_worker_task_duration_seconds"} {
		if !used[must] {
			t.Errorf("no panel shows %s", must)
		}
	}
}
