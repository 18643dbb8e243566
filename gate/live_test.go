package gate

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// liveCoordinator answers the two calls of gate --live as web does, and
// records every path asked for.
type liveCoordinator struct {
	mu    sync.Mutex
	info  *api.LiveInfo  // nil: a coordinator that predates the live mesh
	m     *matrix.Matrix // nil: no window judged yet
	token string
	paths []string
	query string     // the matrix request's
	t     testing.TB // serveLive sets it: an answer that fails to write fails the test
}

func (c *liveCoordinator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paths = append(c.paths, r.Method+" "+r.URL.Path)
	if err := c.answer(w, r); err != nil {
		c.t.Errorf("fake coordinator answering %s %s: %v", r.Method, r.URL, err)
	}
}

func (c *liveCoordinator) answer(w http.ResponseWriter, r *http.Request) error {
	fail := func(code int, msg string) error {
		w.WriteHeader(code)
		return json.NewEncoder(w).Encode(api.Error{Error: msg})
	}
	switch {
	case c.token != "" && r.Header.Get("Authorization") != "Bearer "+c.token:
		return fail(http.StatusUnauthorized, "missing or wrong bearer token")
	case c.info == nil:
		return fail(http.StatusNotFound, "no such route: "+r.Method+" "+r.URL.Path)
	case !c.info.Enabled && c.info.Error == "enabled-but-200":
		return json.NewEncoder(w).Encode(c.info)
	case !c.info.Enabled:
		return fail(http.StatusNotFound, "live probing is off: set live.enabled in the coordinator's config")
	case r.URL.Path == "/api/v1/live":
		return json.NewEncoder(w).Encode(c.info)
	case r.URL.Path == "/api/v1/sweeps/live/matrix" && c.m == nil:
		return fail(http.StatusNotFound, "the live mesh has no window to judge yet")
	case r.URL.Path == "/api/v1/sweeps/live/matrix":
		c.query = r.URL.RawQuery
		switch r.URL.Query().Get("cells") {
		case "bad":
			return c.m.BadOnly().WriteJSON(w)
		case "summary":
			return c.m.SummaryOnly().WriteJSON(w)
		default:
			return c.m.WriteJSON(w)
		}
	default:
		return fail(http.StatusInternalServerError, "gate --live asked for "+r.URL.Path)
	}
}

// serveLive serves c for the length of the test.
func serveLive(t *testing.T, c *liveCoordinator) *httptest.Server {
	t.Helper()
	c.t = t
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return srv
}

func liveInfo(age float64) *api.LiveInfo {
	return &api.LiveInfo{Enabled: true, PlanID: 4, Members: 6, Probing: 6, Window: 7, WindowSeconds: 10,
		AgeSeconds: age, CoverageSeconds: 270, HorizonWindows: 3, RatePerHCA: 50, Cells: 60}
}

// liveFabric is fabric judged as the live matrix is: tested cells only.
func liveFabric(broken ...string) *matrix.Matrix {
	th := matrix.DefaultThresholds()
	th.TestedOnly = true
	return fabricJudged(th, broken...)
}

// withLinks is a live header whose link flows found cables in the given
// states.
func withLinks(states ...string) *api.LiveInfo {
	info := liveInfo(4)
	info.LinkFlows = 512
	for i, st := range states {
		info.Links = append(info.Links, api.LiveLink{Cable: fmt.Sprintf("leaf-r0-0%d:33 <-> spine-r0-02:5", i), State: st,
			Loss: 0.021, Worst: 0.03, Probes: 960, Lost: 20, Flows: 4, Partners: 6, Since: 5, LastBad: 7})
	}
	return info
}

func TestLiveExitCodes(t *testing.T) {
	untested := func() *matrix.Matrix {
		th := matrix.DefaultThresholds()
		th.TestedOnly = true
		return matrix.Build(fabric().Nodes, nil, th)
	}
	cases := []struct {
		name   string
		c      *liveCoordinator
		o      Options
		want   int
		stderr string
		paths  int // requests made; -1: any
	}{
		{"healthy", &liveCoordinator{info: liveInfo(4), m: liveFabric()}, Options{}, ExitHealthy, "", 2},
		{"unhealthy", &liveCoordinator{info: liveInfo(4), m: liveFabric("node-03")}, Options{}, ExitUnhealthy, "", 2},
		{"live off", &liveCoordinator{info: &api.LiveInfo{}}, Options{}, ExitInfra, "live probing is off", 1},
		{"off but answered", &liveCoordinator{info: &api.LiveInfo{Error: "enabled-but-200"}}, Options{}, ExitInfra, "live mesh is off", 1},
		{"no live mesh", &liveCoordinator{}, Options{}, ExitInfra, "run a sweep instead", 1},
		{"no window yet", &liveCoordinator{info: liveInfo(4)}, Options{}, ExitInfra, "no window to judge yet", 2},
		{"nothing probed", &liveCoordinator{info: liveInfo(4), m: untested()}, Options{}, ExitInfra, "judged no probed pair", 2},
		{"stale", &liveCoordinator{info: liveInfo(31), m: liveFabric()}, Options{}, ExitInfra, "the live view is stale: window 7 ended 31s ago, more than --live-max-age 30s", 1},
		{"within three windows", &liveCoordinator{info: liveInfo(29), m: liveFabric()}, Options{}, ExitHealthy, "", 2},
		{"max age given", &liveCoordinator{info: liveInfo(45), m: liveFabric()}, Options{LiveMaxAge: time.Minute}, ExitHealthy, "", 2},
		{"stale past max age", &liveCoordinator{info: liveInfo(61), m: liveFabric()}, Options{LiveMaxAge: time.Minute}, ExitInfra, "stale", 1},
		{"no window length", &liveCoordinator{info: &api.LiveInfo{Enabled: true}, m: liveFabric()}, Options{}, ExitInfra, "give --live-max-age", 1},
		{"wrong token", &liveCoordinator{token: "a", info: liveInfo(4)}, Options{Token: "b"}, ExitUsage, "401", 1},
		{"with latest", &liveCoordinator{}, Options{Latest: true}, ExitUsage, "--live and --latest", 0},
		{"with sweep flags", &liveCoordinator{}, Options{Request: api.SweepRequest{Mode: "full"}}, ExitUsage, "drop the sweep flags", 0},
		{"with baseline", &liveCoordinator{}, Options{BaselineFile: filepath.Join(t.TempDir(), "b.json")}, ExitUsage, "--save-baseline needs a sweep", 0},
		{"negative max age", &liveCoordinator{}, Options{LiveMaxAge: -time.Second}, ExitUsage, "--live-max-age -1s", 0},
		{"cable recovered", &liveCoordinator{info: withLinks("recovered"), m: liveFabric()}, Options{}, ExitHealthy, "", 2},
		{"cable lossy", &liveCoordinator{info: withLinks("recovered", "lossy"), m: liveFabric()}, Options{}, ExitPerformance, "", 2},
		{"cable down", &liveCoordinator{info: withLinks("lossy", "down"), m: liveFabric()}, Options{}, ExitUnhealthy, "", 2},
		{"cable down and a dead node", &liveCoordinator{info: withLinks("down"), m: liveFabric("node-03")}, Options{}, ExitUnhealthy, "", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Live = true
			o.Coordinator = serveLive(t, tc.c).URL
			code, out, errOut := run(t, o)
			if code != tc.want || !strings.Contains(errOut, tc.stderr) {
				t.Fatalf("exit %d, want %d; stderr %q, want %q; stdout %q", code, tc.want, errOut, tc.stderr, out)
			}
			if len(tc.c.paths) != tc.paths {
				t.Fatalf("requests %q, want %d", tc.c.paths, tc.paths)
			}
			for _, p := range tc.c.paths {
				if strings.HasPrefix(p, "POST") {
					t.Fatalf("gate --live started a sweep: %q", tc.c.paths)
				}
			}
			if code == ExitHealthy && !strings.Contains(out, "live window 7 (plan 4, 6 of 6 nodes probing") {
				t.Fatalf("summary %q does not name the live window", out)
			}
			if info := tc.c.info; info != nil && len(info.Links) > 0 &&
				!strings.Contains(out, "cable leaf-r0-00:33 <-> spine-r0-02:5: "+info.Links[0].State+", 2.10% of 960 probes lost") {
				t.Fatalf("summary %q does not list the cable", out)
			}
		})
	}
}

func TestLiveMaxAgeNeedsLive(t *testing.T) {
	code, _, errOut := run(t, Options{Coordinator: "http://127.0.0.1:1", LiveMaxAge: time.Minute})
	if code != ExitUsage || !strings.Contains(errOut, "--live-max-age needs --live") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// The live window writes the same files a sweep does, and asks for every
// cell only when a file lists them.
func TestLiveWritesFiles(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	c := &liveCoordinator{info: liveInfo(4), m: liveFabric("node-03")}
	srv := serveLive(t, c)

	code, out, errOut := run(t, Options{Coordinator: srv.URL, Live: true, ExcludeFile: p("exclude"), HostFile: p("hosts")})
	if code != ExitUnhealthy || c.query != "cells=summary" {
		t.Fatalf("exit %d, matrix query %q: %s %s", code, c.query, out, errOut)
	}
	if b, _ := os.ReadFile(p("exclude")); string(b) != "node-03\n" {
		t.Fatalf("exclude %q", b)
	}

	code, out, errOut = run(t, Options{Coordinator: srv.URL, Live: true, JUnitFile: p("live.xml"), JSONFile: p("live.json")})
	if code != ExitUnhealthy || c.query != "" {
		t.Fatalf("exit %d, matrix query %q: %s %s", code, c.query, out, errOut)
	}
	b, err := os.ReadFile(p("live.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var j junit
	if err := xml.Unmarshal(b, &j); err != nil || j.Tests != 60 || j.Failures != 10 {
		t.Fatalf("junit: %v, %d tests, %d failures", err, j.Tests, j.Failures)
	}
	m, err := readMatrix(p("live.json"))
	if err != nil || m.Healthy || !slices.ContainsFunc(m.Suspects, func(s matrix.Suspect) bool { return s.Node == "node-03" }) {
		t.Fatalf("json: %v, healthy %v, suspects %+v", err, m != nil && m.Healthy, m)
	}
}
