package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

func serve(t *testing.T, f *fakeBackend) http.Handler {
	t.Helper()
	return New(f, Options{}).Handler()
}

func do(t *testing.T, h http.Handler, method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func decode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decoding %T from %q: %v", v, rec.Body.String(), err)
	}
	return v
}

// wantError checks status, that the body is an api.Error and which field it
// names, and returns it for further checks.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, field string) api.Error {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("error Content-Type %q, want JSON", ct)
	}
	e := decode[api.Error](t, rec)
	if e.Error == "" {
		t.Fatalf("error body has no message: %s", rec.Body)
	}
	if e.Field != field {
		t.Fatalf("error field %q, want %q (message %q)", e.Field, field, e.Error)
	}
	return e
}

func TestHealthz(t *testing.T) {
	rec := do(t, serve(t, newFake()), "GET", "/healthz", "")
	if rec.Code != 200 || decode[map[string]string](t, rec)["status"] != "ok" {
		t.Fatalf("healthz: %d %s", rec.Code, rec.Body)
	}
}

func TestListNodes(t *testing.T) {
	f := newFake()
	rec := do(t, serve(t, f), "GET", "/api/v1/nodes", "")
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	got := decode[[]api.NodeInfo](t, rec)
	if !reflect.DeepEqual(got, f.nodes) {
		t.Fatalf("nodes round trip:\n got %+v\nwant %+v", got, f.nodes)
	}
	if got[0].Inventory.Ports[0].GIDReason == "" {
		t.Fatal("inventory detail lost")
	}
}

func TestListsAreEmptyArraysNotNull(t *testing.T) {
	h := serve(t, &fakeBackend{})
	for _, p := range []string{"/api/v1/nodes", "/api/v1/sweeps"} {
		rec := do(t, h, "GET", p, "")
		if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != "[]" {
			t.Errorf("%s: %d %q, want 200 []", p, rec.Code, rec.Body)
		}
	}
}

func TestListSweepsNewestFirst(t *testing.T) {
	rec := do(t, serve(t, newFake()), "GET", "/api/v1/sweeps", "")
	got := decode[[]api.SweepInfo](t, rec)
	if len(got) != 2 || got[0].ID != "s2" || got[1].ID != "s1" {
		t.Fatalf("sweeps %+v, want s2 then s1", got)
	}
	if got[1].Healthy == nil || *got[1].Healthy {
		t.Fatalf("s1 healthy = %v, want false", got[1].Healthy)
	}
}

func TestGetSweep(t *testing.T) {
	h := serve(t, newFake())
	for path, want := range map[string]string{"/api/v1/sweeps/s1": "s1", "/api/v1/sweeps/latest": "s2"} {
		rec := do(t, h, "GET", path, "")
		if rec.Code != 200 {
			t.Fatalf("%s: status %d %s", path, rec.Code, rec.Body)
		}
		if got := decode[api.SweepInfo](t, rec); got.ID != want {
			t.Errorf("%s: id %q, want %q", path, got.ID, want)
		}
	}
}

func TestUnknownSweepIs404NamingTheID(t *testing.T) {
	h := serve(t, newFake())
	for _, p := range []string{"/api/v1/sweeps/nope", "/api/v1/sweeps/nope/matrix"} {
		e := wantError(t, do(t, h, "GET", p, ""), 404, "")
		if !strings.Contains(e.Error, `"nope"`) {
			t.Errorf("%s: error %q does not name the id", p, e.Error)
		}
	}
}

func TestLatestWithoutSweepsIs404(t *testing.T) {
	h := serve(t, &fakeBackend{})
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/latest", ""), 404, "")
	wantError(t, do(t, h, "GET", "/api/v1/sweeps/latest/matrix", ""), 404, "")
}

func TestSweepWithoutMatrixIs404(t *testing.T) {
	f := newFake()
	delete(f.matrices, "s2")
	e := wantError(t, do(t, serve(t, f), "GET", "/api/v1/sweeps/s2/matrix", ""), 404, "")
	if !strings.Contains(e.Error, "s2") {
		t.Errorf("error %q does not name the sweep", e.Error)
	}
}

func TestGetMatrixJSON(t *testing.T) {
	f := newFake()
	h := serve(t, f)
	for _, p := range []string{"/api/v1/sweeps/s1/matrix", "/api/v1/sweeps/latest/matrix", "/api/v1/sweeps/s1/matrix?format=json"} {
		rec := do(t, h, "GET", p, "")
		if rec.Code != 200 {
			t.Fatalf("%s: status %d %s", p, rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", p, ct)
		}
		got := decode[matrix.Matrix](t, rec)
		want := f.matrices["s1"]
		if len(got.Cells) != len(want.Cells) || got.Rails != 2 || len(got.Nodes) != 3 {
			t.Fatalf("%s: matrix has %d cells, %d rails, %d nodes", p, len(got.Cells), got.Rails, len(got.Nodes))
		}
		if !reflect.DeepEqual(got.Cells, want.Cells) || !reflect.DeepEqual(got.Suspects, want.Suspects) {
			t.Fatalf("%s: cells or suspects changed in transit", p)
		}
	}
}

func TestGetMatrixBadFormat(t *testing.T) {
	wantError(t, do(t, serve(t, newFake()), "GET", "/api/v1/sweeps/s1/matrix?format=xlsx", ""), 400, "format")
}

func TestGetMatrixCSVDownload(t *testing.T) {
	h := serve(t, newFake())
	rec := do(t, h, "GET", "/api/v1/sweeps/s1/matrix?format=csv&download=1", "")
	if rec.Code != 200 {
		t.Fatalf("status %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Errorf("Content-Type %q", ct)
	}
	if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="rdmamesh-s1.csv"` {
		t.Errorf("Content-Disposition %q", cd)
	}
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	if !strings.HasPrefix(lines[0], "rail,src,dst") || len(lines) != 1+len(testMatrix().Cells) {
		t.Fatalf("CSV has %d lines, header %q", len(lines), lines[0])
	}
	if cd := do(t, h, "GET", "/api/v1/sweeps/s1/matrix", "").Header().Get("Content-Disposition"); cd != "" {
		t.Errorf("Content-Disposition %q without download=1", cd)
	}
	if cd := do(t, h, "GET", "/api/v1/sweeps/s1/matrix?format=junit&download=1", "").Header().Get("Content-Disposition"); !strings.Contains(cd, ".xml") {
		t.Errorf("JUnit download named %q", cd)
	}
}

func TestDownloadNameIsSafe(t *testing.T) {
	if got := downloadName(`a"b/../c\r\n`, "json"); got != "rdmamesh-ab..crn.json" {
		t.Fatalf("downloadName = %q", got)
	}
	if got := downloadName(`"/"`, "csv"); got != "rdmamesh-sweep.csv" {
		t.Fatalf("downloadName = %q", got)
	}
}

func TestGetMatrixJUnit(t *testing.T) {
	rec := do(t, serve(t, newFake()), "GET", "/api/v1/sweeps/s1/matrix?format=junit", "")
	// The exporter lands separately; until then the endpoint must say so
	// plainly rather than serve something else.
	if _, ok := any(testMatrix()).(junitWriter); !ok {
		wantError(t, rec, http.StatusNotImplemented, "format")
		t.Skip("matrix.WriteJUnit does not exist yet; checked the 501 answer")
	}
	if rec.Code != 200 {
		t.Fatalf("status %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
		t.Errorf("Content-Type %q, want XML", ct)
	}
	if !strings.Contains(rec.Body.String(), "<testsuite") {
		t.Errorf("no <testsuite in JUnit body: %.200s", rec.Body)
	}
}

func TestMatrixETagAndGzip(t *testing.T) {
	h := serve(t, newFake())
	first := do(t, h, "GET", "/api/v1/sweeps/s1/matrix", "")
	etag := first.Header().Get("ETag")
	if first.Code != 200 || etag == "" {
		t.Fatalf("status %d, ETag %q", first.Code, etag)
	}
	if cc := first.Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control %q, want no-cache so polls revalidate", cc)
	}
	if again := do(t, h, "GET", "/api/v1/sweeps/s1/matrix", "", "If-None-Match", etag); again.Code != http.StatusNotModified || again.Body.Len() != 0 {
		t.Fatalf("If-None-Match: status %d with %d bytes, want 304 empty", again.Code, again.Body.Len())
	}
	if other := do(t, h, "GET", "/api/v1/sweeps/s1/matrix", "", "If-None-Match", `"stale"`); other.Code != 200 {
		t.Fatalf("stale ETag: status %d, want 200", other.Code)
	}

	if first.Body.Len() < minGzip {
		t.Fatalf("fixture matrix is %d bytes, too small to exercise gzip", first.Body.Len())
	}
	zipped := do(t, h, "GET", "/api/v1/sweeps/s1/matrix", "", "Accept-Encoding", "br, gzip")
	if zipped.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", zipped.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain, first.Body.Bytes()) {
		t.Fatal("gzip body differs from the plain one")
	}
	if zipped.Header().Get("ETag") != etag {
		t.Error("ETag must not depend on the encoding")
	}
	refused := do(t, h, "GET", "/api/v1/sweeps/s1/matrix", "", "Accept-Encoding", "gzip;q=0")
	if refused.Header().Get("Content-Encoding") != "" {
		t.Error("gzip sent to a client that refused it with q=0")
	}
}

func TestStartSweep(t *testing.T) {
	f := newFake()
	body := `{"mode":"full","nodes":["n1","n2"],"rails":[0,1],"latency_iters":500,"latency_size":8,` +
		`"bw_size":65536,"bw_iters":100,"pair_timeout":"10s"}`
	rec := do(t, serve(t, f), "POST", "/api/v1/sweeps", body, "Content-Type", "application/json")
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d %s", rec.Code, rec.Body)
	}
	info := decode[api.SweepInfo](t, rec)
	if info.ID != "s3" || info.Mode != "full" {
		t.Fatalf("answer %+v", info)
	}
	if loc := rec.Header().Get("Location"); loc != "/api/v1/sweeps/s3" {
		t.Errorf("Location %q", loc)
	}
	want := api.SweepRequest{Mode: "full", Nodes: []string{"n1", "n2"}, Rails: []int{0, 1}, LatencyIters: 500,
		LatencySize: 8, BWSize: 65536, BWIters: 100, PairTimeout: "10s"}
	if len(f.started) != 1 || !reflect.DeepEqual(f.started[0], want) {
		t.Fatalf("backend got %+v, want %+v", f.started, want)
	}
}

func TestStartSweepEmptyBodyTakesDefaults(t *testing.T) {
	f := newFake()
	for _, body := range []string{"", "{}", "  \n", "null"} {
		rec := do(t, serve(t, f), "POST", "/api/v1/sweeps", body)
		if rec.Code != http.StatusAccepted {
			t.Fatalf("body %q: status %d %s", body, rec.Code, rec.Body)
		}
	}
	for _, r := range f.started {
		if !reflect.DeepEqual(r, api.SweepRequest{}) {
			t.Fatalf("backend got %+v, want the zero request", r)
		}
	}
}

func TestStartSweepBadBodies(t *testing.T) {
	cases := []struct {
		name, body, field string
	}{
		{"unknown field", `{"mode":"quick","iterations":5}`, "iterations"},
		{"case-variant key", `{"Mode":"quick"}`, "Mode"},
		{"bad mode", `{"mode":"fast"}`, "mode"},
		{"mode wrong type", `{"mode":1}`, "mode"},
		{"negative latency_iters", `{"latency_iters":-1}`, "latency_iters"},
		{"negative latency_size", `{"latency_size":-8}`, "latency_size"},
		{"negative bw_size", `{"bw_size":-1}`, "bw_size"},
		{"negative bw_iters", `{"bw_iters":-100}`, "bw_iters"},
		{"fractional iters", `{"bw_iters":1.5}`, "bw_iters"},
		{"string iters", `{"latency_iters":"100"}`, "latency_iters"},
		{"bad pair_timeout", `{"pair_timeout":"ten seconds"}`, "pair_timeout"},
		{"unitless pair_timeout", `{"pair_timeout":"10"}`, "pair_timeout"},
		{"zero pair_timeout", `{"pair_timeout":"0s"}`, "pair_timeout"},
		{"negative pair_timeout", `{"pair_timeout":"-5s"}`, "pair_timeout"},
		{"negative rail", `{"rails":[0,-1]}`, "rails"},
		{"duplicate rail", `{"rails":[1,1]}`, "rails"},
		{"empty node", `{"nodes":["n1",""]}`, "nodes"},
		{"duplicate node", `{"nodes":["n1","n1"]}`, "nodes"},
		{"nodes wrong type", `{"nodes":"n1"}`, "nodes"},
		{"malformed JSON", `{"mode":"quick"`, ""},
		{"not JSON", `mode=quick`, ""},
		{"array body", `["quick"]`, ""},
		{"trailing data", `{"mode":"quick"} {"mode":"full"}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			rec := do(t, serve(t, f), "POST", "/api/v1/sweeps", tc.body, "Content-Type", "application/json")
			e := wantError(t, rec, http.StatusBadRequest, tc.field)
			if tc.field != "" && !strings.Contains(e.Error, tc.field) {
				t.Errorf("message %q does not name %q", e.Error, tc.field)
			}
			if f.startCalls() != 0 {
				t.Error("a bad request reached the backend")
			}
		})
	}
}

func TestStartSweepTooLarge(t *testing.T) {
	f := newFake()
	body := `{"nodes":["` + strings.Repeat("x", maxRequestBody) + `"]}`
	wantError(t, do(t, serve(t, f), "POST", "/api/v1/sweeps", body), http.StatusRequestEntityTooLarge, "")
	if f.startCalls() != 0 {
		t.Error("an oversized request reached the backend")
	}
}

func TestStartSweepBackendErrors(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status int
		field  string
	}{
		{"field", fieldErr{"nodes"}, 400, "nodes"},
		{"wrapped field", fmt.Errorf("validating: %w", fieldErr{"rails"}), 400, "rails"},
		{"conflict", busyErr{}, 409, ""},
		{"wrapped conflict", fmt.Errorf("start: %w", busyErr{}), 409, ""},
		{"unavailable", notLeaderErr{}, 503, ""},
		{"joined unavailable", errors.Join(errors.New("dispatch"), notLeaderErr{}), 503, ""},
		{"Conflict() false", notConflictErr{}, 500, ""},
		{"plain", errors.New("raft apply: timeout"), 500, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.startErr = tc.err
			rec := do(t, serve(t, f), "POST", "/api/v1/sweeps", `{"mode":"quick"}`)
			e := wantError(t, rec, tc.status, tc.field)
			if e.Error != tc.err.Error() {
				t.Errorf("message %q, want the backend's %q", e.Error, tc.err.Error())
			}
		})
	}
}

func TestStartSweepRefusesCrossOrigin(t *testing.T) {
	f := newFake()
	h := serve(t, f)
	rec := do(t, h, "POST", "/api/v1/sweeps", `{"mode":"full"}`, "Sec-Fetch-Site", "cross-site")
	wantError(t, rec, http.StatusForbidden, "")
	if f.startCalls() != 0 {
		t.Fatal("a cross-site request started a sweep")
	}
	if rec := do(t, h, "POST", "/api/v1/sweeps", `{}`, "Sec-Fetch-Site", "same-origin"); rec.Code != http.StatusAccepted {
		t.Fatalf("same-origin POST: status %d %s", rec.Code, rec.Body)
	}
}

func TestUnknownRoutesAndMethodsAreJSON(t *testing.T) {
	h := serve(t, newFake())
	wantError(t, do(t, h, "GET", "/api/v1/nope", ""), 404, "")
	wantError(t, do(t, h, "GET", "/no-such-file.js", ""), 404, "")
	wantError(t, do(t, h, "POST", "/app.js", ""), 404, "")
	wantError(t, do(t, h, "DELETE", "/api/v1/sweeps", ""), http.StatusMethodNotAllowed, "")
}

func TestPanicIsJSON500AndLogged(t *testing.T) {
	var logs bytes.Buffer
	f := newFake()
	f.panicky = true
	h := New(f, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Handler()
	wantError(t, do(t, h, "GET", "/api/v1/nodes", ""), 500, "")
	if !strings.Contains(logs.String(), "fake backend exploded") {
		t.Fatalf("panic not logged: %q", logs.String())
	}
	if rec := do(t, h, "GET", "/healthz", ""); rec.Code != 200 {
		t.Fatal("server unusable after a panic")
	}
}

func TestRequestsLoggedAtDebugOnly(t *testing.T) {
	var debug, info bytes.Buffer
	hd := New(newFake(), Options{Logger: slog.New(slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug}))}).Handler()
	hi := New(newFake(), Options{Logger: slog.New(slog.NewTextHandler(&info, nil))}).Handler()
	do(t, hd, "GET", "/api/v1/sweeps", "")
	do(t, hi, "GET", "/api/v1/sweeps", "")
	if !strings.Contains(debug.String(), "path=/api/v1/sweeps") || !strings.Contains(debug.String(), "status=200") {
		t.Errorf("debug log lacks the request: %q", debug.String())
	}
	if info.Len() != 0 {
		t.Errorf("request logged above debug: %q", info.String())
	}
}

func TestNewRejectsNilBackend(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New(nil) did not panic")
		}
	}()
	New(nil, Options{})
}

func TestStatus(t *testing.T) {
	rec := do(t, serve(t, newFake()), "GET", "/api/v1/status", "")
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	if s := decode[api.Status](t, rec); s.State != "Leader" || s.Leader != "c0" || len(s.Voters) != 1 {
		t.Fatalf("status %+v", s)
	}
	wantError(t, do(t, serve(t, newFake()), "POST", "/api/v1/status", ""), http.StatusMethodNotAllowed, "")
}

func TestMetricsRouteFollowsReadAuth(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if _, err := io.WriteString(w, "up 1\n"); err != nil {
			t.Error(err)
		}
	})
	closed := New(newFake(), Options{Token: "tok", Metrics: metrics}).Handler()
	wantError(t, do(t, closed, "GET", "/metrics", ""), http.StatusUnauthorized, "")
	if rec := do(t, closed, "GET", "/metrics", "", "Authorization", "Bearer tok"); rec.Code != 200 || rec.Body.String() != "up 1\n" {
		t.Fatalf("with token: %d %q", rec.Code, rec.Body)
	}
	open := New(newFake(), Options{Token: "tok", OpenReads: true, Metrics: metrics}).Handler()
	if rec := do(t, open, "GET", "/metrics", ""); rec.Code != 200 {
		t.Fatalf("open reads: %d", rec.Code)
	}
	wantError(t, do(t, serve(t, newFake()), "GET", "/metrics", ""), http.StatusNotFound, "")
}

// The lists carry ETags like the matrix: the UI polls them.
func TestListsRevalidate(t *testing.T) {
	h := serve(t, newFake())
	for _, p := range []string{"/api/v1/nodes", "/api/v1/sweeps"} {
		first := do(t, h, "GET", p, "")
		etag := first.Header().Get("ETag")
		if first.Code != 200 || etag == "" {
			t.Fatalf("%s: %d, ETag %q", p, first.Code, etag)
		}
		if again := do(t, h, "GET", p, "", "If-None-Match", etag); again.Code != http.StatusNotModified {
			t.Fatalf("%s: revalidation gave %d", p, again.Code)
		}
	}
}

// The export streams, so an encoding error must surface before the first
// byte: a 500 with a JSON error, not a 200 cut short. A NaN cannot be JSON.
func TestMatrixExportErrorIsNotATruncated200(t *testing.T) {
	f := newFake()
	m := testMatrix()
	m.Cells[len(m.Cells)-1].Latency = &probe.Latency{P50Ns: math.NaN()}
	f.matrices["s1"] = m
	rec := do(t, serve(t, f), "GET", "/api/v1/sweeps/s1/matrix?download=1", "", "Accept-Encoding", "gzip")
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "matrix export failed") {
		t.Fatalf("status %d, body %.200s: want a 500 naming the failed export", rec.Code, rec.Body)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body is not JSON: %v", err)
	}
	if h := rec.Header(); h.Get("Content-Disposition") != "" || h.Get("Content-Encoding") != "" || h.Get("ETag") != "" {
		t.Fatalf("headers of the failed export leaked into the error: %v", h)
	}
}

func TestMatrixBadCellsOnly(t *testing.T) {
	h := serve(t, newFake())
	var all, bad, summary matrix.Matrix
	for path, m := range map[string]*matrix.Matrix{"/api/v1/sweeps/s1/matrix": &all, "/api/v1/sweeps/s1/matrix?cells=bad": &bad,
		"/api/v1/sweeps/s1/matrix?cells=summary": &summary} {
		rec := do(t, h, "GET", path, "")
		if rec.Code != 200 {
			t.Fatalf("%s: status %d", path, rec.Code)
		}
		if err := m.ReadJSON(rec.Body); err != nil {
			t.Fatal(err)
		}
	}
	ok := 0
	for _, r := range all.Cells {
		if r.Verdict == matrix.VerdictOK {
			ok++
		}
	}
	if ok == 0 || ok == len(all.Cells) || len(bad.Cells) != len(all.Cells)-ok || bad.CellsOmitted != ok || all.CellsOmitted != 0 {
		t.Fatalf("all %d cells (%d ok), bad-only %d cells with %d omitted", len(all.Cells), ok, len(bad.Cells), bad.CellsOmitted)
	}
	if len(summary.Cells) != 0 || summary.CellsOmitted != len(all.Cells) {
		t.Fatalf("summary: %d cells, %d omitted; want none of %d", len(summary.Cells), summary.CellsOmitted, len(all.Cells))
	}
	for _, part := range []*matrix.Matrix{&bad, &summary} {
		if !reflect.DeepEqual(all.Suspects, part.Suspects) || !reflect.DeepEqual(all.Counts, part.Counts) || all.Summary() != part.Summary() {
			t.Fatal("suspects, counts and the summary must be the whole sweep's")
		}
	}
	rec := do(t, h, "GET", "/api/v1/sweeps/s1/matrix?cells=some", "")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"cells"`) {
		t.Fatalf("cells=some: status %d, body %s", rec.Code, rec.Body)
	}
}
