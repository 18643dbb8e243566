package coordinator

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A worker that gossip calls dead but that answers its API keeps its
// tests; one that does not answer loses them as peer-lost.
func TestConfirmDead(t *testing.T) {
	c := &Coordinator{inflight: newInflight(), client: &http.Client{}, log: slog.New(slog.DiscardHandler)}
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.Path
		w.Write([]byte(`{"node":"vm1"}`))
	}))
	api := strings.TrimPrefix(srv.URL, "http://")

	ctx, release := c.inflight.track(context.Background(), 0, "vm1", "vm2")
	defer release()
	c.confirmDead(context.Background(), "vm1", api)
	if ctx.Err() != nil || asked != "/v1/health" {
		t.Fatalf("a worker that answers lost its test (%v) or was not asked (%q)", context.Cause(ctx), asked)
	}

	srv.Close()
	c.confirmDead(context.Background(), "vm1", api)
	if e, ok := deadCause(ctx); !ok || e.node != "vm1" {
		t.Fatalf("a worker that does not answer kept its test: %v", context.Cause(ctx))
	}
}
