package gate

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// fabric builds the matrix a coordinator would serve: 6 nodes, 2 rails of
// 400G InfiniBand, every cell measured; broken nodes have rail 1 down.
func fabric(broken ...string) *matrix.Matrix {
	return fabricJudged(matrix.DefaultThresholds(), broken...)
}

func fabricJudged(th matrix.Thresholds, broken ...string) *matrix.Matrix {
	var nodes []matrix.Node
	var cells []matrix.Cell
	for i := 1; i <= 6; i++ {
		n := matrix.Node{Name: fmt.Sprintf("node-%02d", i), State: "alive"}
		for r := 0; r < 2; r++ {
			n.Ports = append(n.Ports, probe.Port{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, Rail: r,
				LinkLayer: "InfiniBand", State: "ACTIVE", RateGbps: 400, Usable: true})
		}
		nodes = append(nodes, n)
	}
	bad := map[string]bool{}
	for _, b := range broken {
		bad[b] = true
	}
	for r := 0; r < 2; r++ {
		for _, s := range nodes {
			for _, d := range nodes {
				if s.Name == d.Name {
					continue
				}
				c := matrix.Cell{Src: s.Name, Dst: d.Name, Rail: r, Round: 1, Class: probe.ClassOK,
					Latency:   &probe.Latency{P50Ns: 1000, P99Ns: 1300},
					Bandwidth: &probe.Bandwidth{Gbps: 390, MsgRate: 7e5}}
				if r == 1 && (bad[s.Name] || bad[d.Name]) {
					c.Class, c.Latency, c.Bandwidth = probe.ClassPortDown, nil, nil
					c.Error = &probe.Error{Class: probe.ClassPortDown, Cause: "port 1 is DOWN", Fix: "reseat the cable"}
				}
				cells = append(cells, c)
			}
		}
	}
	return matrix.Build(nodes, cells, th)
}

// coordinator fakes the API the gate uses: a sweep that advances one round
// per poll.
type coordinator struct {
	mu          sync.Mutex
	m           *matrix.Matrix
	rounds      int
	done        int
	requests    int
	startStatus int    // answer to POST /sweeps; 0 = 202
	endState    string // "" = done
	endError    string
	neverEnds   bool
	badMatrix   bool
	matrixQuery string // the last matrix request's query
	// noSummary answers cells=summary as a coordinator older than it
	// does: 400, naming the field.
	noSummary bool
	// pattern is the sweep's resolved pattern; coverage is what
	// /coverage answers (nil: 404).
	pattern  string
	coverage *api.Coverage
	t        testing.TB // serve sets it: an answer that fails to write fails the test
}

func (c *coordinator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	if err := c.answer(w, r); err != nil {
		c.t.Errorf("fake coordinator answering %s %s: %v", r.Method, r.URL, err)
	}
}

func (c *coordinator) answer(w http.ResponseWriter, r *http.Request) error {
	info := func() api.SweepInfo {
		i := api.SweepInfo{ID: "s1", State: api.SweepRunning, Mode: "full", Nodes: make([]string, len(c.m.Nodes)),
			Rounds: c.rounds, RoundsDone: c.done, Cells: len(c.m.Cells), CellsDone: len(c.m.Cells) * c.done / c.rounds}
		if c.pattern != "" {
			i.Spec = &api.SweepRequest{Pattern: c.pattern}
		}
		if c.done >= c.rounds && !c.neverEnds {
			i.State, i.Error = api.SweepDone, c.endError
			if c.endState != "" {
				i.State = c.endState
			}
		}
		return i
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/sweeps":
		if c.startStatus != 0 {
			w.WriteHeader(c.startStatus)
			return json.NewEncoder(w).Encode(api.Error{Error: http.StatusText(c.startStatus), Field: "nodes"})
		}
		w.WriteHeader(http.StatusAccepted)
		return json.NewEncoder(w).Encode(info())
	case r.URL.Path == "/api/v1/sweeps/latest":
		c.done = c.rounds
		return json.NewEncoder(w).Encode(info())
	case r.URL.Path == "/api/v1/sweeps/s1":
		if c.done < c.rounds {
			c.done++
		}
		return json.NewEncoder(w).Encode(info())
	case r.URL.Path == "/api/v1/sweeps/s1/coverage" && c.coverage != nil:
		return json.NewEncoder(w).Encode(c.coverage)
	case r.URL.Path == "/api/v1/sweeps/s1/matrix":
		c.matrixQuery = r.URL.RawQuery
		if c.badMatrix {
			_, err := w.Write([]byte("{not json"))
			return err
		}
		switch r.URL.Query().Get("cells") {
		case "bad":
			return c.m.BadOnly().WriteJSON(w)
		case "summary":
			if c.noSummary {
				w.WriteHeader(http.StatusBadRequest)
				return json.NewEncoder(w).Encode(api.Error{Error: `cells "summary" is not one of all, bad`, Field: "cells"})
			}
			return c.m.SummaryOnly().WriteJSON(w)
		default:
			return c.m.WriteJSON(w)
		}
	default:
		http.NotFound(w, r)
		return nil
	}
}

func serve(t *testing.T, c *coordinator) *httptest.Server {
	t.Helper()
	if c.rounds == 0 {
		c.rounds = 3
	}
	c.t = t
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return srv
}

func run(t *testing.T, o Options) (code int, out, errOut string) {
	t.Helper()
	if o.Poll == 0 {
		o.Poll = time.Millisecond
	}
	var ob, eb bytes.Buffer
	code = Run(context.Background(), o, &ob, &eb)
	return code, ob.String(), eb.String()
}

func TestExitCodes(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("[1,2"), 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name      string
		c         *coordinator // nil: no server
		o         Options
		want      int
		stderr    string
		noTraffic bool
	}{
		{"healthy", &coordinator{m: fabric()}, Options{}, ExitHealthy, "", false},
		{"unhealthy", &coordinator{m: fabric("node-03")}, Options{}, ExitUnhealthy, "", false},
		{"latest", &coordinator{m: fabric()}, Options{Latest: true}, ExitHealthy, "", false},
		{"no URL", nil, Options{Coordinator: ""}, ExitUsage, "--coordinator URL is required", true},
		{"not a URL", nil, Options{Coordinator: "coordinator:8080"}, ExitUsage, "must start with http://", true},
		{"bad request", &coordinator{m: fabric(), startStatus: 400}, Options{}, ExitUsage, "400 Bad Request: Bad Request (field nodes)", false},
		{"wrong URL", &coordinator{m: fabric(), startStatus: 404}, Options{}, ExitUsage, "404", false},
		{"not enough workers", &coordinator{m: fabric(), startStatus: 503}, Options{}, ExitInfra, "too few workers", false},
		{"busy", &coordinator{m: fabric(), startStatus: 409}, Options{}, ExitInfra, "409", false},
		{"coordinator error", &coordinator{m: fabric(), startStatus: 500}, Options{}, ExitInfra, "500", false},
		{"unreachable", nil, Options{Coordinator: closed.URL}, ExitInfra, "unreachable", false},
		{"sweep failed", &coordinator{m: fabric(), endState: api.SweepFailed, endError: "budget of 10m0s exceeded"}, Options{},
			ExitInfra, "ended failed: budget of 10m0s exceeded", false},
		{"gate budget exceeded", &coordinator{m: fabric(), neverEnds: true}, Options{Timeout: 50 * time.Millisecond},
			ExitInfra, "time budget exceeded", false},
		{"bad matrix answer", &coordinator{m: fabric(), badMatrix: true}, Options{}, ExitInfra, "bad answer", false},
		{"diff file missing", &coordinator{m: fabric()}, Options{DiffAgainst: filepath.Join(dir, "nope.json")}, ExitUsage, "--diff-against", true},
		{"diff file not a matrix", &coordinator{m: fabric()}, Options{DiffAgainst: garbage}, ExitUsage, "not a matrix JSON", true},
		{"diff json without diff", &coordinator{m: fabric()}, Options{DiffJSONFile: filepath.Join(dir, "d.json")}, ExitUsage, "needs --diff-against", true},
		{"output directory missing", &coordinator{m: fabric()}, Options{JUnitFile: filepath.Join(dir, "no", "x.xml")}, ExitUsage, "--junit", true},
		{"negative slots", &coordinator{m: fabric()}, Options{HostSlots: -1}, ExitUsage, "host slots", true},
		{"TLS files with an http URL", &coordinator{m: fabric()}, Options{TLS: &tls.Config{}}, ExitUsage, "use https://", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			if c.c != nil {
				o.Coordinator = serve(t, c.c).URL
			}
			code, _, errOut := run(t, o)
			if code != c.want || !strings.Contains(errOut, c.stderr) {
				t.Fatalf("exit %d, want %d; stderr %q, want %q", code, c.want, errOut, c.stderr)
			}
			if c.noTraffic && c.c != nil && c.c.requests != 0 {
				t.Fatalf("%d requests before a usage error", c.c.requests)
			}
		})
	}
}

// Our own reading of JUnit, as CI servers parse it.
type junit struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestWritesEveryFile(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	srv := serve(t, &coordinator{m: fabric("node-03")})
	code, out, errOut := run(t, Options{Coordinator: srv.URL, JSONFile: p("m.json"), JUnitFile: p("m.xml"),
		CSVFile: p("m.csv"), ExcludeFile: p("exclude"), HostFile: p("hosts"), HostSlots: 8, NCCLEnvFile: p("nccl.env")})
	if code != ExitUnhealthy {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	read := func(name string) string {
		b, err := os.ReadFile(p(name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	var j junit
	if err := xml.Unmarshal([]byte(read("m.xml")), &j); err != nil {
		t.Fatal(err)
	}
	if j.Tests != 60 || j.Failures != 10 || len(j.Suites) != 2 {
		t.Fatalf("junit: %d tests, %d failures, %d suites", j.Tests, j.Failures, len(j.Suites))
	}
	for _, c := range j.Suites[1].Cases {
		involved := strings.Contains(c.Name, "node-03")
		if involved != (c.Failure != nil) {
			t.Fatalf("case %q failure %+v", c.Name, c.Failure)
		}
		if c.Failure != nil && (c.Failure.Type != "failed" || !strings.Contains(c.Failure.Message, "port 1 is DOWN; fix: reseat the cable")) {
			t.Fatalf("failure %+v", c.Failure)
		}
	}

	if got := read("exclude"); got != "node-03\n" {
		t.Fatalf("exclude %q", got)
	}
	if got := read("hosts"); got != "node-01 slots=8\nnode-02 slots=8\nnode-04 slots=8\nnode-05 slots=8\nnode-06 slots=8\n" {
		t.Fatalf("hostfile %q", got)
	}
	env := read("nccl.env")
	if !strings.Contains(env, "\nexport NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\n") || strings.Contains(env, "NCCL_IB_GID_INDEX=") ||
		!strings.Contains(env, "# rdmamesh NCCL settings for 5 usable node(s) of 6") {
		t.Fatalf("nccl env:\n%s", env)
	}
	rows, err := csv.NewReader(strings.NewReader(read("m.csv"))).ReadAll()
	if err != nil || len(rows) != 61 || rows[0][0] != "rail" {
		t.Fatalf("csv: %v, %d rows", err, len(rows))
	}
	var m matrix.Matrix
	if err := json.Unmarshal([]byte(read("m.json")), &m); err != nil || m.SchemaVersion != matrix.SchemaVersion || m.Healthy {
		t.Fatalf("json: %v, version %d", err, m.SchemaVersion)
	}
	if leftovers, _ := filepath.Glob(p("*.tmp")); len(leftovers) != 0 {
		t.Fatalf("temp files left: %v", leftovers)
	}
	if !strings.Contains(out, "suspect 1: hca node-03/mlx5_1 (rail 1)") || !strings.Contains(out, "exclude (1 node(s)): node-03") {
		t.Fatalf("summary:\n%s", out)
	}
}

func TestDiffAgainst(t *testing.T) {
	dir := t.TempDir()
	earlier := filepath.Join(dir, "earlier.json")
	var buf bytes.Buffer
	if err := fabric().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(earlier, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, &coordinator{m: fabric("node-03")})
	diffJSON := filepath.Join(dir, "diff.json")
	code, out, errOut := run(t, Options{Coordinator: srv.URL, DiffAgainst: earlier, DiffJSONFile: diffJSON})
	if code != ExitUnhealthy {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"compared with " + earlier, "HEALTHY -> 6 nodes, 60 cells, UNHEALTHY",
		"cells: 10 worse, 0 better", "new suspect: hca node-03/mlx5_1 (rail 1)"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	raw, err := os.ReadFile(diffJSON)
	var d matrix.DiffReport
	if err != nil || json.Unmarshal(raw, &d) != nil || len(d.Worse) != 10 || len(d.NewSuspects) != 1 {
		t.Fatalf("diff json: %v %+v", err, d)
	}
}

// On a terminal: one line redrawn with \r, ended before the summary.
func TestProgressOnTTY(t *testing.T) {
	srv := serve(t, &coordinator{m: fabric(), rounds: 4})
	code, out, _ := run(t, Options{Coordinator: srv.URL, TTY: true})
	if code != ExitHealthy {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out, "\r[") || !strings.Contains(out, "round 4/4, cells 60/60 (100%)\n") {
		t.Fatalf("no bar:\n%q", out)
	}
	bar := out[strings.Index(out, "\r"):strings.Index(out, "sweep s1 (")]
	if strings.Count(bar, "\n") != 1 {
		t.Fatalf("the bar printed %d newlines: %q", strings.Count(bar, "\n"), bar)
	}
	if !strings.Contains(out, "[##############################] ") {
		t.Fatalf("bar never full: %q", out)
	}
}

// In a log: plain lines, at most one per interval, plus the first and the
// last, with a fake clock so the test waits for nothing.
func TestProgressPlainLines(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	p := newProgress(&buf, Options{ProgressEvery: 5 * time.Second, Now: func() time.Time { return clock }})
	info := api.SweepInfo{ID: "s9", State: api.SweepRunning, Rounds: 10, Cells: 100}
	for i := 0; i <= 10; i++ {
		info.RoundsDone, info.CellsDone = i, 10*i
		if i == 10 {
			info.State = api.SweepDone
		}
		p.update(info)
		clock = clock.Add(2 * time.Second) // polls every 2 s
	}
	p.finish()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		"sweep s9: round 0/10, cells 0/100 (0%)",   // t=0
		"sweep s9: round 3/10, cells 30/100 (30%)", // t=6
		"sweep s9: round 6/10, cells 60/100 (60%)", // t=12
		"sweep s9: round 9/10, cells 90/100 (90%)", // t=18
		"sweep s9: round 10/10, cells 100/100 (100%)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") || strings.Contains(buf.String(), "\r") {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), strings.Join(want, "\n"))
	}
}

func TestLoadSpec(t *testing.T) {
	req, err := LoadSpec("../configs/gate/gate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if req.Mode != "full" || req.Budget != "5m" || req.Retests == nil || *req.Retests != 2 || req.RailMode != "same" {
		t.Fatalf("example spec read as %+v", req)
	}
	bad := filepath.Join(t.TempDir(), "gate.yaml")
	if err := os.WriteFile(bad, []byte("mode: full\nhost: gpu[1-4]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSpec(bad); err == nil || !strings.Contains(err.Error(), "host") {
		t.Fatalf("a misspelt key must be refused, got %v", err)
	}
	two := 2
	merged := Merge(req, api.SweepRequest{Hosts: "gpu[1-4]", Retests: &two, Mode: "quick"})
	if merged.Hosts != "gpu[1-4]" || merged.Mode != "quick" || merged.Budget != "5m" {
		t.Fatalf("flags must override the file and keep the rest: %+v", merged)
	}
}

// Without an output that lists every cell the gate fetches no cell (from
// a coordinator older than cells=summary, the bad ones), and everything it
// prints and writes must be what the whole matrix gives.
func TestBadCellsOnlyWhenEnough(t *testing.T) {
	files := []string{"exclude", "hosts", "nccl.env"}
	runWith := func(full, old bool) (string, map[string]string, string) {
		dir := t.TempDir()
		p := func(name string) string { return filepath.Join(dir, name) }
		co := &coordinator{m: fabric("node-03"), noSummary: old}
		o := Options{Coordinator: serve(t, co).URL, ExcludeFile: p("exclude"), HostFile: p("hosts"), NCCLEnvFile: p("nccl.env")}
		if full {
			o.JSONFile = p("m.json")
		}
		code, out, errOut := run(t, o)
		if code != ExitUnhealthy {
			t.Fatalf("exit %d: %s %s", code, out, errOut)
		}
		got := map[string]string{}
		for _, f := range files {
			b, err := os.ReadFile(p(f))
			if err != nil {
				t.Fatal(err)
			}
			got[f] = string(b)
		}
		return out, got, co.matrixQuery
	}
	outAll, filesAll, qAll := runWith(true, false)
	outSum, filesSum, qSum := runWith(false, false)
	outBad, filesBad, qBad := runWith(false, true)
	if qAll != "" || qSum != "cells=summary" || qBad != "cells=bad" {
		t.Fatalf("matrix queries %q (with --json), %q (without) and %q (without, an older coordinator): want all cells only for --json",
			qAll, qSum, qBad)
	}
	for _, got := range []struct {
		out   string
		files map[string]string
	}{{outSum, filesSum}, {outBad, filesBad}} {
		if got.out != outAll {
			t.Fatalf("summary differs:\n%s\n%s", outAll, got.out)
		}
		if !reflect.DeepEqual(filesAll, got.files) || filesAll["exclude"] == "" {
			t.Fatalf("files differ or are empty:\n%v\n%v", filesAll, got.files)
		}
	}
}

// A link sweep's gate prints its coverage: each rail's link directions
// covered and those left short; a coordinator that cannot say is noted,
// and neither changes the exit code.
func TestPrintsLinkCoverage(t *testing.T) {
	cov := &api.Coverage{Sweep: "s1", Traced: 12, Planes: []api.PlaneCoverage{{Rail: 0, Links: 12, Covered: 11, Tests: 12, MinTests: 1, MaxTests: 3,
		Uncovered: []api.UncoveredLink{{Link: "leaf1:102 -> spine2:1", Tests: 1, Why: "one test's path crossed it"}}}}}
	for _, tc := range []struct {
		cov  *api.Coverage
		want []string
	}{
		{cov, []string{"link coverage (paths: 12 traced, 0 modelled, 0 unknown):",
			"rail 0: 11 of 12 link directions crossed by 2 tests with other partners; 12 tests, 1-3 a direction",
			"short: leaf1:102 -> spine2:1 (1 tests): one test's path crossed it"}},
		{nil, []string{"link coverage: not known"}},
	} {
		srv := serve(t, &coordinator{m: fabric(), pattern: "links", coverage: tc.cov})
		code, out, _ := run(t, Options{Coordinator: srv.URL})
		if code != ExitHealthy {
			t.Errorf("exit %d, want %d", code, ExitHealthy)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, out)
			}
		}
	}
}
