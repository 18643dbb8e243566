package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/api"
)

// forwardStart hands a sweep request to the leader's API, so a client may
// talk to any coordinator. Without a known leader (election, or we are cut
// off from the majority) it refuses: a minority must accept no writes.
func (c *Coordinator) forwardStart(ctx context.Context, req api.SweepRequest) (api.SweepInfo, error) {
	_, leaderID := c.raft.LeaderWithID()
	if leaderID == "" {
		return api.SweepInfo{}, sweep.Unavailable("no raft leader is known to this coordinator (election in progress, or it is cut off from the majority); retry or ask another coordinator")
	}
	leader, ok := c.reg.get(string(leaderID))
	if !ok || leader.APIAddr == "" || leader.State != "alive" {
		return api.SweepInfo{}, sweep.Unavailable(fmt.Sprintf("leader %s has no reachable API address in gossip yet; retry", leaderID))
	}
	body, _ := json.Marshal(req)
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(leader.APIAddr, "/api/v1/sweeps"), bytes.NewReader(body))
	if err != nil {
		return api.SweepInfo{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.opts.Token != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	resp, err := c.client.Do(hreq)
	if err != nil {
		return api.SweepInfo{}, sweep.Unavailable(fmt.Sprintf("forwarding to leader %s at %s: %v", leaderID, leader.APIAddr, err))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusOK {
		var info api.SweepInfo
		if err := json.Unmarshal(raw, &info); err != nil {
			return api.SweepInfo{}, fmt.Errorf("leader %s: bad answer: %w", leaderID, err)
		}
		return info, nil
	}
	var ae api.Error
	_ = json.Unmarshal(raw, &ae)
	msg := fmt.Sprintf("leader %s: %s", leaderID, orUnknown(ae.Error))
	switch resp.StatusCode {
	case http.StatusBadRequest:
		return api.SweepInfo{}, sweep.BadRequest(ae.Field, msg)
	case http.StatusConflict:
		return api.SweepInfo{}, &conflictError{msg: msg}
	default:
		return api.SweepInfo{}, sweep.Unavailable(msg)
	}
}
