package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/selffault"
)

// openPeer asks the target worker to open the responder half of a test.
func (a *Agent) openPeer(ctx context.Context, t probe.Task, rp probe.RailPair, local probe.QPInfo) (probe.SessionReply, error) {
	var reply probe.SessionReply
	body, _ := json.Marshal(probe.SessionRequest{Version: probe.Version, SweepID: t.SweepID, Src: t.Src, Dst: t.Dst,
		Deadline: t.Deadline, Ticket: t.Ticket, Local: rp.Dst, Initiator: local, Params: t.Params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url(t.DstAPI, "/v1/sessions"), bytes.NewReader(body))
	if err != nil {
		return reply, err
	}
	req.Header.Set("Content-Type", "application/json")
	a.authorize(req)
	resp, err := a.client.Do(req)
	if err != nil {
		if selffault.Note("connecting to worker "+t.Dst, err) {
			return reply, a.testerError()
		}
		if ctx.Err() != nil {
			return reply, &probe.Error{Class: probe.ClassTimeout, Cause: fmt.Sprintf("worker %s did not answer the session request in time", t.Dst),
				Fix: "check that the rdmamesh worker on " + t.Dst + " is running and not overloaded"}
		}
		return reply, &probe.Error{Class: probe.ClassPeerLost, Cause: fmt.Sprintf("cannot reach worker %s at %s: %v", t.Dst, t.DstAPI, err),
			Fix: "check that the rdmamesh worker on " + t.Dst + " is running and its API port is reachable from " + t.Src}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode != http.StatusOK {
		var er probe.ErrorReply
		if json.Unmarshal(raw, &er) == nil && er.Error != nil {
			return reply, er.Error
		}
		return reply, fmt.Errorf("worker %s answered %s: %s", t.Dst, resp.Status, bytes.TrimSpace(raw))
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		return reply, fmt.Errorf("worker %s: bad session reply: %w", t.Dst, err)
	}
	return reply, nil
}

// closePeer ends the responder half. It runs after the test, possibly after
// the pair deadline, so it has its own short timeout.
func (a *Agent) closePeer(api, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, a.url(api, "/v1/sessions/"+id), nil)
	if err != nil {
		return
	}
	a.authorize(req)
	resp, err := a.client.Do(req)
	if err != nil {
		a.log.Debug("close peer session", "api", api, "err", err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
