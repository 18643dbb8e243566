package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

type traceBackend struct {
	*fakeBackend
	got []api.TraceRequest
	err error
}

func (b *traceBackend) TraceCell(_ context.Context, id string, req api.TraceRequest) (api.CellTrace, error) {
	b.got = append(b.got, req)
	if b.err != nil {
		return api.CellTrace{}, b.err
	}
	return api.CellTrace{Src: req.Src, Dst: req.Dst, Rail: req.Rail, Flow: 49441, Why: "traced " + id,
		Hops: []api.TraceHop{{TTL: 1, Addr: "10.78.1.1", Switch: "leaf1"}, {TTL: 2, Reason: "no ICMP answer"}}}, nil
}

type badTrace struct{}

func (badTrace) Error() string { return "cell vm1 -> vm9 is not in the sweep" }
func (badTrace) Field() string { return "dst" }

func TestTraceEndpoint(t *testing.T) {
	f := newFake()
	id := f.Sweeps()[0].ID
	for _, tc := range []struct {
		name, body string
		backend    http.Handler
		status     int
		want       string
	}{
		{"traced", `{"src":"a","dst":"b","rail":1}`, nil, http.StatusOK, `"why":"traced ` + id + `"`},
		{"not json", `{"src":`, nil, http.StatusBadRequest, "the body is not"},
		{"unknown field", `{"src":"a","dst":"b","lane":1}`, nil, http.StatusBadRequest, "lane"},
		{"no cell", `{"rail":1}`, nil, http.StatusBadRequest, `"field":"src"`},
		{"the backend refuses", `{"src":"vm1","dst":"vm9"}`, New(&traceBackend{fakeBackend: f, err: badTrace{}}, Options{}).Handler(),
			http.StatusBadRequest, `"field":"dst"`},
		{"no tracer", `{"src":"a","dst":"b"}`, New(f, Options{}).Handler(), http.StatusNotFound, "cannot trace"},
	} {
		tb := &traceBackend{fakeBackend: f}
		h := tc.backend
		if h == nil {
			h = New(tb, Options{}).Handler()
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/sweeps/"+id+"/trace", strings.NewReader(tc.body)))
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %d %s; want %d with %q", tc.name, rec.Code, rec.Body, tc.status, tc.want)
		}
		if tc.name == "traced" {
			var got api.CellTrace
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(tb.got) != 1 || tb.got[0] != (api.TraceRequest{Src: "a", Dst: "b", Rail: 1}) ||
				len(got.Hops) != 2 || got.Hops[1].Reason == "" {
				t.Errorf("traced: %v %+v, backend asked %+v", err, got, tb.got)
			}
		}
	}
}

type pathsBackend struct{ *fakeBackend }

func (b pathsBackend) SweepPaths(id string) ([]api.SweepPath, bool) {
	return []api.SweepPath{{Src: "vm1", Dst: "vm2", Flow: 49441, Hops: []string{"10.78.1.1", "10.79.1.10", "10.79.2.9"},
		Links: []string{"vm1/rxe0 -> leaf1:1", "leaf1:102 -> spine2:1", "spine2:2 -> leaf2:102", "leaf2:2 -> vm2/rxe0"}}}, true
}

// GET /api/v1/sweeps/{id}/paths lists the sweep's traced flows with their
// links; a coordinator that keeps none answers 404.
func TestPathsEndpoint(t *testing.T) {
	f := newFake()
	id := f.Sweeps()[0].ID
	for _, tc := range []struct {
		name    string
		backend Backend
		status  int
		want    string
	}{
		{"traced", pathsBackend{f}, http.StatusOK, `"links":["vm1/rxe0 -\u003e leaf1:1"`},
		{"no paths kept", f, http.StatusNotFound, "keeps no traced paths"},
	} {
		rec := httptest.NewRecorder()
		New(tc.backend, Options{}).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/sweeps/"+id+"/paths", nil))
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %d %s; want %d with %q", tc.name, rec.Code, rec.Body, tc.status, tc.want)
		}
	}
}

type coverageBackend struct {
	*fakeBackend
	cov *api.Coverage
}

func (b coverageBackend) SweepCoverage(id string) (*api.Coverage, bool) { return b.cov, true }

// GET /api/v1/sweeps/{id}/coverage: the link coverage, or 404 saying why
// there is none.
func TestCoverageEndpoint(t *testing.T) {
	f := newFake()
	id := f.Sweeps()[0].ID
	cov := &api.Coverage{Sweep: id, Traced: 12, Planes: []api.PlaneCoverage{{Rail: 0, Links: 12, Covered: 11, Tests: 12,
		Uncovered: []api.UncoveredLink{{Link: "leaf1:102 -> spine2:1", Tests: 1, Why: "one test's path crossed it"}}}}}
	for _, tc := range []struct {
		name    string
		backend Backend
		status  int
		want    string
	}{
		{"covered", coverageBackend{f, cov}, http.StatusOK, `"why":"one test's path crossed it"`},
		{"no topology", coverageBackend{f, nil}, http.StatusNotFound, "ran without a topology"},
		{"not reported", f, http.StatusNotFound, "does not report link coverage"},
	} {
		rec := httptest.NewRecorder()
		New(tc.backend, Options{}).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/sweeps/"+id+"/coverage", nil))
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %d %s; want %d with %q", tc.name, rec.Code, rec.Body, tc.status, tc.want)
		}
	}
}
