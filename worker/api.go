package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	mux.HandleFunc("POST "+wire.StreamPath, a.handleTaskStream)
	mux.HandleFunc("POST /v1/live/plan", a.handleLivePlan)
	mux.HandleFunc("GET /v1/live/summaries", a.handleLiveSummaries)
	mux.Handle("POST /v1/trace", a.traceHandler())
	a.sessions.Register(mux)
	if a.opts.Metrics != nil {
		mux.Handle("GET /metrics", a.opts.Metrics)
	}
	return a.requireToken(mux)
}

func (a *Agent) handleTask(w http.ResponseWriter, r *http.Request) {
	if a.opts.AnswerTask != nil && wire.IsMessage(r) {
		if a.answerStandIn(w, r) {
			return
		}
	}
	t, err := session.ReadMessage(r, wire.TaskMsg)
	if err != nil {
		wire.Refuse(w, r, http.StatusBadRequest, session.BadRequest(err))
		return
	}
	if err := a.validateTask(&t); err != nil {
		wire.Refuse(w, r, http.StatusBadRequest, session.BadRequest(err))
		return
	}
	res := a.serveTask(r.Context(), &t)
	wire.Write(w, http.StatusOK, wire.TaskResultMsg.Append(nil, &res))
}

// answerStandIn answers r with Options.AnswerTask; false, with r's body
// put back for the agent to read, when the hook leaves the task to it.
func (a *Agent) answerStandIn(w http.ResponseWriter, r *http.Request) bool {
	in, err := wire.ReadBuf(r.Body, r.ContentLength, maxBody)
	if err != nil {
		wire.Refuse(w, r, http.StatusBadRequest, session.BadRequest(err))
		return true
	}
	defer in.Put()
	out := wire.GetBuf()
	defer out.Put()
	var ok bool
	if out.B, ok = a.opts.AnswerTask(in.B, out.B, false); !ok {
		r.Body = io.NopCloser(bytes.NewReader(bytes.Clone(in.B)))
		return false
	}
	wire.Write(w, http.StatusOK, out.B)
	return true
}

// handleTaskStream serves the coordinator's task stream (wire.StreamPath):
// the same tasks as POST /v1/tasks, one frame each way a task.
func (a *Agent) handleTaskStream(w http.ResponseWriter, r *http.Request) {
	a.streams.Serve(w, r, a.streamAnswer)
}

func (a *Agent) streamAnswer(ctx context.Context, task, out []byte, codes bool) ([]byte, byte) {
	if a.opts.AnswerTask != nil {
		if b, ok := a.opts.AnswerTask(task, out, codes); ok {
			return b, wire.FrameResult
		}
	}
	t, err := wire.TaskMsg.Decode(task)
	if err == nil {
		err = a.validateTask(&t)
	} else {
		err = fmt.Errorf("decode request: %w", err)
	}
	if err != nil {
		return wire.ErrorMsg.Append(out, session.BadRequest(err)), wire.FrameError
	}
	res := a.serveTask(ctx, &t)
	return wire.ResultCodec(codes).Append(out, &res), wire.FrameResult
}

// serveTask runs a validated task, both halves.
func (a *Agent) serveTask(ctx context.Context, t *wire.Task) wire.TaskResult {
	// Probing stays paused through the reverse half too: this HCA answers
	// the peer's writes then.
	release := a.holdLive(t)
	defer release()
	res := a.RunTask(ctx, *t)
	if a.opts.OnTask != nil {
		a.opts.OnTask(res) // this direction's; the peer reports the reverse
	}
	if t.Reverse != nil {
		res.Reverse = a.handReverse(ctx, t)
	}
	return res
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

// TaskStreams is how many task streams the coordinator has open here.
func (a *Agent) TaskStreams() int { return a.streams.Open() }
