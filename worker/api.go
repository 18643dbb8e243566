package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/rdmamesh/rdmamesh/internal/session"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// The worker API. Tasks (from the coordinator) and probe sessions (from
// peers, internal/session) are wire messages; the read endpoints people
// and scripts use (health, inventory, metrics) answer JSON.
func (a *Agent) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "node": a.opts.Name})
	})
	mux.HandleFunc("GET /v1/inventory", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, a.Inventory())
	})
	mux.HandleFunc("GET /v1/health", a.handleHealth)
	mux.HandleFunc("POST /v1/tasks", a.handleTask)
	mux.HandleFunc("POST /v1/live/plan", a.handleLivePlan)
	mux.HandleFunc("GET /v1/live/summaries", a.handleLiveSummaries)
	a.sessions.Register(mux)
	if a.opts.Metrics != nil {
		mux.Handle("GET /metrics", a.opts.Metrics)
	}
	return a.requireToken(mux)
}

func (a *Agent) handleTask(w http.ResponseWriter, r *http.Request) {
	t, err := session.ReadMessage(r, wire.TaskMsg)
	if err != nil {
		wire.Refuse(w, r, http.StatusBadRequest, session.BadRequest(err))
		return
	}
	if err := a.validateTask(&t); err != nil {
		wire.Refuse(w, r, http.StatusBadRequest, session.BadRequest(err))
		return
	}
	// Probing stays paused through the reverse half too: this HCA answers
	// the peer's writes then.
	release := a.holdLive(&t)
	res := a.RunTask(r.Context(), t)
	if a.opts.OnTask != nil {
		a.opts.OnTask(res) // this direction's; the peer reports the reverse
	}
	if t.Reverse != nil {
		res.Reverse = a.handReverse(r.Context(), &t)
	}
	release()
	wire.Write(w, http.StatusOK, wire.TaskResultMsg.Append(nil, &res))
}

func (a *Agent) validateTask(t *wire.Task) error {
	switch {
	case t.Src != a.opts.Name:
		return fmt.Errorf("task src %q sent to worker %q", t.Src, a.opts.Name)
	case t.Dst == "" || t.DstAPI == "":
		return errors.New("task dst and dst_api are required")
	case len(t.Rails) == 0:
		return errors.New("task has no rails")
	case t.Reverse != nil && (t.SrcAPI == "" || len(t.Reverse.Rails) == 0):
		return errors.New("a task's reverse half needs src_api and rails")
	}
	return t.Params.Validate()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// maxBody bounds what a peer's answer can make us read.
const maxBody = session.MaxBody
