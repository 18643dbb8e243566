package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// FuzzStartSweepBody sends arbitrary bodies to POST /api/v1/sweeps through
// the real handler. The handler must never fail with 5xx (recoverJSON would
// hide a decoder panic as a 500); a refusal is a 4xx JSON api.Error whose
// field, when set, is named in the message, and it never reaches the
// backend; an accepted body is one that plain encoding/json reads the same
// way and that passes validation again.
func FuzzStartSweepBody(f *testing.F) {
	for _, seed := range []string{
		// accepted
		``, `{}`, `null`, ` {"mode":"quick"} `,
		`{"mode":"full","nodes":["n1","n2"],"rails":[0,1],"latency_iters":100,"latency_size":8,"bw_size":65536,"bw_iters":10,"pair_timeout":"5s"}`,
		`{"nodes":[],"rails":null}`,
		// refused
		`{"mode":"fast"}`, `{"MODE":"quick"}`, `{"mode":1}`, `{"unknown":true}`, `{"nodes":"n1"}`,
		`{"nodes":["n1","n1"]}`, `{"nodes":[" "]}`, `{"rails":[-1]}`, `{"rails":[0,0]}`, `{"latency_iters":-5}`,
		`{"latency_iters":1.5}`, `{"bw_size":1e99}`, `{"latency_size":99999999999999999999}`,
		`{"pair_timeout":"soon"}`, `{"pair_timeout":"-1s"}`, `{"pair_timeout":"0s"}`,
		`[]`, `"x"`, `42`, `{} {}`, `{"mode":"quick"`, `{"mode":"quick"}x`, "{\"mode\":\"\xff\"}", `{"nodes":[null]}`,
	} {
		f.Add([]byte(seed))
	}
	fields := map[string]bool{}
	for _, fl := range sweepRequestFields(&api.SweepRequest{}) {
		fields[fl.name] = true
	}
	// One server for every input (building it is most of an input's cost);
	// the fuzz engine runs inputs one at a time per process.
	fake := &fakeBackend{}
	h := New(fake, Options{}).Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		fake.mu.Lock()
		fake.started = nil
		fake.mu.Unlock()
		req := httptest.NewRequest(http.MethodPost, "/api/v1/sweeps", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		switch {
		case rec.Code == http.StatusAccepted:
			if len(fake.started) != 1 {
				t.Fatalf("202 but the backend was called %d times", len(fake.started))
			}
			got := fake.started[0]
			if err := validateSweepRequest(&got); err != nil {
				t.Fatalf("accepted a request that fails validation: %v", err)
			}
			var lenient api.SweepRequest
			if json.Unmarshal(body, &lenient) == nil && !reflect.DeepEqual(lenient, got) {
				t.Fatalf("strict decoding %+v differs from encoding/json's %+v", got, lenient)
			}
		case rec.Code >= 400 && rec.Code < 500:
			if n := fake.startCalls(); n != 0 {
				t.Fatalf("HTTP %d, yet the backend was called %d times", rec.Code, n)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("HTTP %d with Content-Type %q, want JSON", rec.Code, ct)
			}
			var e api.Error
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("HTTP %d without a JSON error message: %q (%v)", rec.Code, rec.Body, err)
			}
			if e.Field != "" && !strings.Contains(e.Error, e.Field) && !strings.Contains(e.Error, strconv.Quote(e.Field)) {
				t.Fatalf("error blames field %q but does not name it: %q", e.Field, e.Error)
			}
			if e.Field != "" && !fields[e.Field] && !strings.Contains(e.Error, "unknown field") {
				t.Fatalf("error blames %q, which is not a request field: %q", e.Field, e.Error)
			}
		default:
			t.Fatalf("HTTP %d for body %q: %s", rec.Code, body, rec.Body)
		}
	})
}
