package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// The flags reach gate.Options: --live reads the live routes only, and
// --live-max-age moves the staleness limit.
func TestGateLiveFlags(t *testing.T) {
	var nodes []matrix.Node
	for _, n := range []string{"a", "b"} {
		nodes = append(nodes, matrix.Node{Name: n, State: "alive", Ports: []probe.Port{{Device: "mlx5_0", Port: 1, State: "ACTIVE", Usable: true}}})
	}
	th := matrix.DefaultThresholds()
	th.TestedOnly = true
	m := matrix.Build(nodes, []matrix.Cell{{Src: "a", Dst: "b", Class: probe.ClassOK, Latency: &probe.Latency{P50Ns: 1000}}}, th)
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		var err error
		switch r.URL.Path {
		case "/api/v1/live":
			err = json.NewEncoder(w).Encode(api.LiveInfo{Enabled: true, Window: 3, WindowSeconds: 10, AgeSeconds: 45, Members: 2, Probing: 2})
		case "/api/v1/sweeps/live/matrix":
			err = m.WriteJSON(w)
		default:
			http.NotFound(w, r)
		}
		if err != nil {
			t.Errorf("answering %s: %v", r.URL.Path, err)
		}
	}))
	defer srv.Close()
	gate := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"gate", "--coordinator", srv.URL}, args...), &out, &errOut)
		return code, out.String() + errOut.String()
	}
	if code, out := gate("--live"); code != 3 || !strings.Contains(out, "stale") {
		t.Fatalf("45 s old, default limit 30 s: exit %d: %s", code, out)
	}
	if code, out := gate("--live", "--live-max-age", "1m"); code != 0 || !strings.Contains(out, "live window 3") {
		t.Fatalf("45 s old, limit 1m: exit %d: %s", code, out)
	}
	if code, out := gate("--live", "--latest"); code != 2 || !strings.Contains(out, "--live and --latest") {
		t.Fatalf("--live --latest: exit %d: %s", code, out)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range asked {
		if strings.HasPrefix(a, "POST") || strings.Contains(a, "latest") {
			t.Fatalf("gate --live asked for %s", a)
		}
	}
}
