package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/selffault"
)

// Batched responder sessions: an initiator opens the remote halves of all
// its rails in one request and closes them in one, instead of a request per
// rail each way. At 1,024 nodes x 8 rails a sweep makes 8.4 M tests; per
// rail that was 16.8 M requests between workers, batched it is 2.1 M.

// errNoBatch means the peer predates the batch endpoints; the caller falls
// back to one request per rail.
var errNoBatch = errors.New("peer has no batch session endpoint")

func (a *Agent) handleOpenSessionBatch(w http.ResponseWriter, r *http.Request) {
	req, err := decodeSessionBatch(r)
	if err != nil {
		writeErr(w, http.StatusBadRequest, badRequest(err))
		return
	}
	switch {
	case req.Version != probe.Version:
		writeErr(w, http.StatusBadRequest, badRequest(fmt.Errorf("session version %d, want %d", req.Version, probe.Version)))
		return
	case len(req.Rails) == 0 || len(req.Rails) > 1024:
		writeErr(w, http.StatusBadRequest, badRequest(fmt.Errorf("%d rails in a session batch: want 1..1024", len(req.Rails))))
		return
	}
	if err := req.Params.Validate(); err != nil {
		writeErr(w, http.StatusBadRequest, badRequest(err))
		return
	}
	now := time.Now()
	one := make([]probe.SessionRequest, len(req.Rails))
	for i, rl := range req.Rails {
		one[i] = probe.SessionRequest{Version: req.Version, SweepID: req.SweepID, Src: req.Src, Dst: req.Dst,
			Deadline: req.Deadline, Ticket: req.Ticket, Local: rl.Local, Initiator: rl.Initiator, Params: req.Params}
		if err := a.authorizeSession(one[i], now); err != nil {
			writeErr(w, http.StatusForbidden, &probe.Error{Class: probe.ClassInternal, Cause: err.Error(),
				Fix: "sessions come only from tests the coordinator scheduled; check that all nodes share auth.token and run the same version"})
			return
		}
	}
	rep := probe.SessionBatchReply{Version: probe.Version, Rails: make([]probe.SessionRailOpen, len(req.Rails))}
	for i, rl := range req.Rails {
		out := &rep.Rails[i]
		out.Rail = rl.Rail
		if err := a.validSessionFields(one[i]); err != nil {
			out.Error = badRequest(err)
			continue
		}
		sr, err := a.openResponder(r.Context(), one[i])
		if err != nil {
			out.Error = probe.Classify(err)
			continue
		}
		out.SessionID, out.Responder = sr.SessionID, sr.Responder
	}
	reply(w, r, rep, func(b []byte) []byte { return probe.AppendSessionBatchReply(b, rep) })
}

func (a *Agent) handleCloseSessions(w http.ResponseWriter, r *http.Request) {
	var req probe.SessionClose
	if err := decode(r, &req); err != nil {
		writeErr(w, http.StatusBadRequest, badRequest(err))
		return
	}
	for _, id := range req.IDs {
		a.sessions.close(id) // an unknown ID already ended (timeout); nothing to do
	}
	w.WriteHeader(http.StatusNoContent)
}

// openPeers asks the target worker for the responder halves of rails.
func (a *Agent) openPeers(ctx context.Context, t probe.Task, rails []probe.SessionRail) (probe.SessionBatchReply, error) {
	var reply probe.SessionBatchReply
	body := probe.AppendSessionBatch(nil, probe.SessionBatchRequest{Version: probe.Version, SweepID: t.SweepID, Src: t.Src, Dst: t.Dst,
		Deadline: t.Deadline, Ticket: t.Ticket, Params: t.Params, Rails: rails})
	raw, ctype, status, err := a.peerCall(ctx, t, http.MethodPost, "/v1/sessions/batch", probe.BinaryType, body)
	switch {
	case err != nil:
		return reply, err
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		return reply, errNoBatch
	case status != http.StatusOK:
		var er probe.ErrorReply
		if json.Unmarshal(raw, &er) == nil && er.Error != nil {
			return reply, er.Error
		}
		return reply, fmt.Errorf("worker %s answered %d: %s", t.Dst, status, bytes.TrimSpace(raw))
	}
	if ctype == probe.BinaryType {
		reply, err = probe.DecodeSessionBatchReply(raw)
	} else {
		err = json.Unmarshal(raw, &reply)
	}
	if err != nil {
		return reply, fmt.Errorf("worker %s: bad session batch reply: %w", t.Dst, err)
	}
	if len(reply.Rails) != len(rails) {
		return reply, fmt.Errorf("worker %s answered %d of %d rails", t.Dst, len(reply.Rails), len(rails))
	}
	return reply, nil
}

// closePeers ends remote halves after the test, possibly after the pair
// deadline, so it has its own short timeout.
func (a *Agent) closePeers(t probe.Task, ids []string) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	body, _ := json.Marshal(probe.SessionClose{IDs: ids})
	if _, _, _, err := a.peerCall(ctx, t, http.MethodPost, "/v1/sessions/close", "application/json", body); err != nil {
		a.log.Debug("close peer sessions", "api", t.DstAPI, "err", err)
	}
}

// peerCall sends one request to the task's target worker and reads the
// answer; transport failures come back classified.
func (a *Agent) peerCall(ctx context.Context, t probe.Task, method, path, ctype string, body []byte) ([]byte, string, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.url(t.DstAPI, path), bytes.NewReader(body))
	if err != nil {
		return nil, "", 0, err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", probe.BinaryType+", application/json")
	a.authorize(req)
	resp, err := a.client.Do(req)
	if err != nil {
		if selffault.Note("connecting to worker "+t.Dst, err) {
			return nil, "", 0, a.testerError()
		}
		if ctx.Err() != nil {
			return nil, "", 0, &probe.Error{Class: probe.ClassTimeout, Cause: fmt.Sprintf("worker %s did not answer the session request in time", t.Dst),
				Fix: "check that the rdmamesh worker on " + t.Dst + " is running and not overloaded"}
		}
		return nil, "", 0, &probe.Error{Class: probe.ClassPeerLost, Cause: fmt.Sprintf("cannot reach worker %s at %s: %v", t.Dst, t.DstAPI, err),
			Fix: "check that the rdmamesh worker on " + t.Dst + " is running and its API port is reachable from " + t.Src}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, "", 0, &probe.Error{Class: probe.ClassPeerLost, Cause: fmt.Sprintf("worker %s: reading the answer: %v", t.Dst, err)}
	}
	return raw, resp.Header.Get("Content-Type"), resp.StatusCode, nil
}
