package session

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/member"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/selffault"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// Client is the initiator side of the exchange.
type Client struct {
	HTTP  *http.Client
	Token string // bearer token of the responder's API; empty = none
	TLS   bool   // dial https
	// Self names this side in a tester fault's cause ("worker node-01"):
	// running out of descriptors while dialling is this process's fault,
	// not the peer's.
	Self string
	// Alive says whether gossip sees a worker alive (nil: unknown). A
	// worker that cannot be dialled while alive is unreachable over the
	// control network, and its test did not run; one that gossip lost is
	// a lost peer.
	Alive func(node string) bool
}

// Open asks the responder at api (host:port) for the remote halves of
// req's rails. A failure to reach it comes back classified (peer-lost,
// timeout, or a tester fault); a refusal as the responder's own error.
func (c *Client) Open(ctx context.Context, api string, req *wire.SessionOpen) (wire.SessionOpened, error) {
	var rep wire.SessionOpened
	raw, ctype, status, err := c.call(ctx, req.Src, req.Dst, api, OpenPath, wire.SessionOpenMsg.Append(nil, req))
	if err != nil {
		return rep, err
	}
	if status != http.StatusOK {
		if e, ok := wire.DecodeError(ctype, raw); ok {
			return rep, e
		}
		return rep, fmt.Errorf("worker %s answered %d: %s", req.Dst, status, bytes.TrimSpace(raw))
	}
	if rep, err = wire.SessionOpenedMsg.Decode(raw); err != nil {
		return rep, fmt.Errorf("worker %s: bad session reply: %w", req.Dst, err)
	}
	if len(rep.Rails) != len(req.Rails) {
		return rep, fmt.Errorf("worker %s answered %d of %d rails", req.Dst, len(rep.Rails), len(req.Rails))
	}
	return rep, nil
}

// Close ends remote halves. It runs after the test, possibly after the
// pair's deadline, so it has its own short timeout.
func (c *Client) Close(src, dst, api string, req *wire.SessionClose) error {
	if len(req.IDs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	raw, ctype, status, err := c.call(ctx, src, dst, api, ClosePath, wire.SessionCloseMsg.Append(nil, req))
	switch {
	case err != nil:
		return err
	case status/100 == 2:
		return nil
	}
	if e, ok := wire.DecodeError(ctype, raw); ok {
		return e
	}
	return fmt.Errorf("worker %s answered %d to a session close", dst, status)
}

// call sends one message to the responder and reads the answer; transport
// failures come back classified.
func (c *Client) call(ctx context.Context, src, dst, api, path string, body []byte) ([]byte, string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, member.URL(c.TLS, api, path), bytes.NewReader(body))
	if err != nil {
		return nil, "", 0, err
	}
	req.Header.Set("Content-Type", wire.ContentType)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if selffault.Note("connecting to worker "+dst, err) {
			ev, _ := selffault.Last()
			return nil, "", 0, &probe.Error{Class: probe.ClassTester, Cause: ev.Cause(c.Self), Fix: ev.Fix()}
		}
		if ctx.Err() != nil {
			return nil, "", 0, &probe.Error{Class: probe.ClassTimeout, Cause: fmt.Sprintf("worker %s did not answer the session request in time", dst),
				Fix: "check that the rdmamesh worker on " + dst + " is running and not overloaded"}
		}
		return nil, "", 0, probe.Unreachable(c.Alive != nil && c.Alive(dst), dst, api, src, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return nil, "", 0, &probe.Error{Class: probe.ClassPeerLost, Cause: fmt.Sprintf("worker %s: reading the answer: %v", dst, err)}
	}
	return raw, resp.Header.Get("Content-Type"), resp.StatusCode, nil
}
