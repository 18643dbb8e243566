package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// maxBody bounds what a peer or the coordinator can make us read.
const maxBody = 1 << 20

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
	mux.HandleFunc("POST /v1/sessions", a.handleOpenSession)
	mux.HandleFunc("DELETE /v1/sessions/{id}", a.handleCloseSession)
	mux.HandleFunc("POST /v1/sessions/batch", a.handleOpenSessionBatch)
	mux.HandleFunc("POST /v1/sessions/close", a.handleCloseSessions)
	if a.opts.Metrics != nil {
		mux.Handle("GET /metrics", a.opts.Metrics)
	}
	return a.requireToken(mux)
}

func (a *Agent) handleTask(w http.ResponseWriter, r *http.Request) {
	t, err := decodeTask(r)
	if err != nil {
		writeErr(w, http.StatusBadRequest, badRequest(err))
		return
	}
	if err := a.validateTask(t); err != nil {
		writeErr(w, http.StatusBadRequest, badRequest(err))
		return
	}
	res := a.RunTask(r.Context(), t)
	if a.opts.OnTask != nil {
		a.opts.OnTask(res)
	}
	reply(w, r, res, func(b []byte) []byte { return probe.AppendTaskResult(b, res) })
}

func (a *Agent) validateTask(t probe.Task) error {
	switch {
	case t.Version != probe.Version:
		return fmt.Errorf("task version %d, this worker speaks %d", t.Version, probe.Version)
	case t.Src != a.opts.Name:
		return fmt.Errorf("task src %q sent to worker %q", t.Src, a.opts.Name)
	case t.Dst == "" || t.DstAPI == "":
		return errors.New("task dst and dst_api are required")
	case len(t.Rails) == 0:
		return errors.New("task has no rails")
	}
	return t.Params.Validate()
}

func (a *Agent) handleOpenSession(w http.ResponseWriter, r *http.Request) {
	var req probe.SessionRequest
	if err := decode(r, &req); err != nil {
		writeErr(w, http.StatusBadRequest, badRequest(err))
		return
	}
	if req.Version != probe.Version {
		writeErr(w, http.StatusBadRequest, badRequest(fmt.Errorf("session version %d, want %d", req.Version, probe.Version)))
		return
	}
	if err := req.Params.Validate(); err != nil {
		writeErr(w, http.StatusBadRequest, badRequest(err))
		return
	}
	if err := a.authorizeSession(req, time.Now()); err != nil {
		writeErr(w, http.StatusForbidden, &probe.Error{Class: probe.ClassInternal, Cause: err.Error(),
			Fix: "sessions come only from tests the coordinator scheduled; check that all nodes share auth.token and run the same version"})
		return
	}
	if err := a.validSessionFields(req); err != nil {
		writeErr(w, http.StatusBadRequest, badRequest(err))
		return
	}
	reply, err := a.openResponder(r.Context(), req)
	if err != nil {
		// A classified failure on our side (port down, bad GID) is an answer,
		// not a transport problem: 422 keeps the class for the initiator.
		writeErr(w, http.StatusUnprocessableEntity, probe.Classify(err))
		return
	}
	writeJSON(w, http.StatusOK, reply)
}

func (a *Agent) handleCloseSession(w http.ResponseWriter, r *http.Request) {
	if !a.sessions.close(r.PathValue("id")) {
		writeErr(w, http.StatusNotFound, &probe.Error{Class: probe.ClassInternal, Cause: "no such session"})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func badRequest(err error) *probe.Error {
	return &probe.Error{Class: probe.ClassInternal, Cause: err.Error(),
		Fix: "coordinator and workers must run the same rdmamesh version"}
}

func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode request: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("decode request: extra data after the JSON object")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, code int, e *probe.Error) {
	writeJSON(w, code, probe.ErrorReply{Error: e})
}
