package worker

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/session"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// requireToken guards the worker API: with a token configured every /v1 call
// (coordinator dispatch, peer sessions, inventory) must carry it.
func (a *Agent) requireToken(next http.Handler) http.Handler {
	if a.opts.Token == "" {
		return next
	}
	want := []byte("Bearer " + a.opts.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) == 1 {
			next.ServeHTTP(w, r)
			return
		}
		wire.Refuse(w, r, http.StatusUnauthorized, &probe.Error{Class: probe.ClassInternal,
			Cause: "missing or wrong bearer token", Fix: "give every rdmamesh process the same auth.token (or auth.token_file)"})
	})
}

// sessionServer is this worker's responder: it serves opens that the
// coordinator scheduled (the ticket) for this node, on ports it has.
func (a *Agent) sessionServer() *session.Server {
	return session.NewServer(session.ServerOptions{Fabric: a.opts.Fabric, Log: a.log, OnSession: a.opts.OnSession,
		Authorize: a.authorizeSession,
		Endpoint: func(ep probe.Endpoint) (probe.Endpoint, error) {
			if !a.hasPort(ep.Device, ep.Port) {
				return ep, fmt.Errorf("no HCA port %s/%d on %s", ep.Device, ep.Port, a.opts.Name)
			}
			return ep, nil
		}})
}

// sessionClient opens the remote halves of this worker's tasks on peers.
func (a *Agent) sessionClient() session.Client {
	return session.Client{HTTP: a.client, Token: a.opts.Token, TLS: a.opts.ClientTLS != nil, Self: "worker " + a.opts.Name,
		Alive: a.gossipAlive}
}

func (a *Agent) authorize(req *http.Request) {
	if a.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+a.opts.Token)
	}
}

// authorizeSession checks that the coordinator scheduled this session and
// that it is for us (403 when not).
func (a *Agent) authorizeSession(req *wire.SessionOpen, now time.Time) error {
	if req.Dst != a.opts.Name {
		return fmt.Errorf("session for %q sent to worker %q", req.Dst, a.opts.Name)
	}
	if a.opts.Token != "" {
		if err := probe.VerifyTicket([]byte(a.opts.Token), req.Ticket, req.SweepID, req.Src, req.Dst, req.Deadline, now); err != nil {
			return err
		}
	}
	return nil
}

// hasPort looks the port up in place: a copy of the inventory per session
// was a quarter of a large sweep's allocations.
func (a *Agent) hasPort(device string, port int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.ContainsFunc(a.inv.Ports, func(p probe.Port) bool { return p.Device == device && p.Port == port })
}
