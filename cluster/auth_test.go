package cluster

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/gate"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// TestSecureControlPlane runs a sweep with a token and gossip encryption on,
// and checks that nothing mutating works without the token and that a worker
// opens no session the coordinator did not schedule.
func TestSecureControlPlane(t *testing.T) {
	cl, ctx := startSecure(t, Options{GossipKey: []byte("0123456789abcdef0123456789abcdef")})
	if _, m := sweep(t, cl); !m.Healthy {
		t.Fatalf("sweep with auth on:\n%s", m.Summary())
	}
	post := func(url, body, token string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if !strings.HasPrefix(body, "{") {
			req.Header.Set("Content-Type", wire.ContentType)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	w1, w2 := cl.Worker("node-01"), cl.Worker("node-02")
	inv1, inv2 := w1.Inventory(), w2.Inventory()
	task := wire.TaskMsg.Append(nil, &wire.Task{SweepID: "rogue", Src: "node-01", Dst: "node-02",
		DstAPI: w2.APIAddr(), Params: probe.DefaultTestParams(), Deadline: time.Now().Add(time.Minute),
		Rails: []probe.RailPair{{Src: probe.Endpoint{Device: inv1.Ports[0].Device, Port: 1}, Dst: probe.Endpoint{Device: inv2.Ports[0].Device, Port: 1}}}})
	session := wire.SessionOpenMsg.Append(nil, &wire.SessionOpen{SweepID: "rogue", Src: "node-01", Dst: "node-02",
		Deadline: time.Now().Add(time.Minute), Params: probe.DefaultTestParams(),
		Rails: []wire.SessionRail{{Local: probe.Endpoint{Device: inv2.Ports[0].Device, Port: 1},
			Initiator: probe.QPInfo{Node: "node-01", Device: "mlx5_0", LinkLayer: "Ethernet", QPN: 7, MTU: 4096, GID: "::ffff:10.0.0.1"}}}})
	cases := []struct {
		name string
		code int
		want int
	}{
		{"start a sweep without the token", post(cl.URL+"/api/v1/sweeps", `{}`, ""), http.StatusUnauthorized},
		{"dispatch a task without the token", post("http://"+w1.APIAddr()+"/v1/tasks", string(task), ""), http.StatusUnauthorized},
		{"open a session without the token", post("http://"+w2.APIAddr()+"/v1/sessions/batch", string(session), ""), http.StatusUnauthorized},
		{"open an unscheduled session with the token", post("http://"+w2.APIAddr()+"/v1/sessions/batch", string(session), "t0ken"), http.StatusForbidden},
	}
	for _, c := range cases {
		if c.code != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.code, c.want)
		}
	}
	var out, errOut strings.Builder
	if code := gate.Run(ctx, gate.Options{Coordinator: cl.URL, Request: api.SweepRequest{Mode: "quick"}}, &out, &errOut); code == gate.ExitHealthy {
		t.Fatalf("gate without a token passed: %s", out.String())
	}
	if code := gate.Run(ctx, gate.Options{Coordinator: cl.URL, Token: "t0ken", Request: api.SweepRequest{Mode: "quick"}}, &out, &errOut); code != gate.ExitHealthy {
		t.Fatalf("gate with the token: exit %d: %s", code, errOut.String())
	}
}

// startSecure starts 4 quick-sweep nodes with the token "t0ken" and what
// else o turns on (gossip key, TLS, replicas); ctx bounds the test.
func startSecure(t *testing.T, o Options) (cl *Cluster, ctx context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	t.Cleanup(cancel)
	o.Nodes, o.Rails, o.Preset, o.Seed, o.Listen = 4, 2, "roce-2x100", 3, "127.0.0.1:0"
	o.Mode, o.Params, o.PairTimeout, o.Token = "quick", probe.DefaultTestParams(), 5*time.Second, "t0ken"
	o.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cl, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	return cl, ctx
}
