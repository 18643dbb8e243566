// Package session is the probe-session exchange between the two ends of a
// test: the responder's side (Server: its session table and the handlers of
// POST /v1/sessions/batch and /v1/sessions/close) and the initiator's
// (Client). Workers serve and call it between peers during a sweep, and
// `rdmamesh probe` (internal/pairtest) speaks the same exchange, so an
// ad-hoc test between two hosts exercises what a sweep does.
//
// An initiator opens its local halves, asks the responder for the remote
// halves of every rail in one request (the QP information goes both ways
// in it), connects and measures, then closes the remote halves in one
// request. Messages are internal/wire's.
package session

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// Routes of the exchange.
const (
	OpenPath  = "/v1/sessions/batch"
	ClosePath = "/v1/sessions/close"
)

// MaxBody bounds what a request or answer of the exchange may be.
const MaxBody = 1 << 20

// maxRails bounds the rails of one open.
const maxRails = 1024

// ServerOptions configure a responder.
type ServerOptions struct {
	Fabric fabric.Fabric
	// Authorize decides whether this responder serves an open at all:
	// scheduled by the coordinator, meant for this node (403 when not).
	// nil serves every open.
	Authorize func(req *wire.SessionOpen, now time.Time) error
	// Endpoint turns the endpoint an initiator asked for into the one to
	// open, or refuses it for that rail: a worker checks it has the port,
	// `rdmamesh probe --listen` answers with the port it was given.
	Endpoint func(ep probe.Endpoint) (probe.Endpoint, error)
	// OnSession sees every responder outcome (nil = served normally).
	OnSession func(error)
	// A responder that reports its tests (`rdmamesh probe --listen`)
	// follows each session: OnOpen sees every rail of an open, opened (id
	// set) or refused (got.Error); OnClose sees the initiator's close of a
	// session before it ends, with what the initiator measured over it (o
	// nil when the close carried none); OnEnd sees the responder half gone,
	// after its close or at its deadline, with the responder's own error.
	OnOpen  func(id string, req *wire.SessionOpen, rl *wire.SessionRail, got *wire.SessionRailOpen)
	OnClose func(id string, o *wire.SessionOutcome)
	OnEnd   func(id string, err error)
	Log     *slog.Logger
}

// Server is the responder side. Every open session has one goroutine
// running Respond; a close or the test's timeout ends it, CloseAll ends
// them all and waits.
type Server struct {
	o      ServerOptions
	log    *slog.Logger
	table  *table
	served [2]atomic.Int64 // connected responders: exchange, rdmacm
}

// NewServer returns a responder with no session open.
func NewServer(o ServerOptions) *Server {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	return &Server{o: o, log: log, table: newTable()}
}

// Register adds the exchange's routes to mux.
func (s *Server) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST "+OpenPath, s.handleOpen)
	mux.HandleFunc("POST "+ClosePath, s.handleClose)
}

// Len is the number of sessions open now.
func (s *Server) Len() int { return s.table.len() }

// Served counts the responders that connected, by connection mode.
func (s *Server) Served() map[string]int64 {
	return map[string]int64{probe.ConnectExchange: s.served[0].Load(), probe.ConnectRDMACM: s.served[1].Load()}
}

// CloseAll ends every session and refuses new ones.
func (s *Server) CloseAll() { s.table.closeAll() }

// BadRequest is the error a peer gets for a message it should never have
// sent: the two ends run different builds.
func BadRequest(err error) *probe.Error {
	return &probe.Error{Class: probe.ClassInternal, Cause: err.Error(),
		Fix: "coordinator and workers must run the same rdmamesh version"}
}

// ReadMessage reads and decodes a request carrying a wire message.
func ReadMessage[T any](r *http.Request, c *wire.Codec[T]) (T, error) {
	var v T
	if !wire.IsMessage(r) {
		return v, fmt.Errorf("decode request: Content-Type %q, want %s (rdmamesh peers send it)", r.Header.Get("Content-Type"), wire.ContentType)
	}
	b, err := wire.ReadBody(r.Body, MaxBody)
	if err != nil {
		return v, err
	}
	if v, err = c.Decode(b); err != nil {
		return v, fmt.Errorf("decode request: %w", err)
	}
	return v, nil
}

func (s *Server) handleOpen(w http.ResponseWriter, r *http.Request) {
	req, err := ReadMessage(r, wire.SessionOpenMsg)
	if err != nil {
		wire.Refuse(w, r, http.StatusBadRequest, BadRequest(err))
		return
	}
	if len(req.Rails) == 0 || len(req.Rails) > maxRails {
		wire.Refuse(w, r, http.StatusBadRequest, BadRequest(fmt.Errorf("%d rails in a session open: want 1..%d", len(req.Rails), maxRails)))
		return
	}
	if err := req.Params.Validate(); err != nil {
		wire.Refuse(w, r, http.StatusBadRequest, BadRequest(err))
		return
	}
	if err := s.authorize(&req, time.Now()); err != nil {
		wire.Refuse(w, r, http.StatusForbidden, &probe.Error{Class: probe.ClassInternal, Cause: err.Error(),
			Fix: "sessions come only from tests the coordinator scheduled; check that all nodes share auth.token and run the same version"})
		return
	}
	rep := wire.SessionOpened{Rails: make([]wire.SessionRailOpen, len(req.Rails))}
	for i := range req.Rails {
		rep.Rails[i] = s.openRail(r.Context(), &req, &req.Rails[i])
		if s.o.OnOpen != nil {
			s.o.OnOpen(rep.Rails[i].SessionID, &req, &req.Rails[i], &rep.Rails[i])
		}
	}
	wire.Write(w, http.StatusOK, wire.SessionOpenedMsg.Append(nil, &rep))
}

// authorize checks every rail's initiator is the open's source, then the
// owner's own rule.
func (s *Server) authorize(req *wire.SessionOpen, now time.Time) error {
	for _, rl := range req.Rails {
		if req.Src == "" || req.Src != rl.Initiator.Node {
			return fmt.Errorf("session src %q does not match the initiator's QP info node %q", req.Src, rl.Initiator.Node)
		}
	}
	if s.o.Authorize != nil {
		return s.o.Authorize(req, now)
	}
	return nil
}

// openRail opens one rail's responder, or says why it could not.
func (s *Server) openRail(ctx context.Context, req *wire.SessionOpen, rl *wire.SessionRail) wire.SessionRailOpen {
	out := wire.SessionRailOpen{Rail: rl.Rail}
	local := rl.Local
	if s.o.Endpoint != nil {
		var err error
		if local, err = s.o.Endpoint(local); err != nil {
			out.Error = BadRequest(err)
			return out
		}
	}
	if err := validLocal(local); err != nil {
		out.Error = BadRequest(err)
		return out
	}
	if err := validQP(rl.Initiator); err != nil {
		out.Error = BadRequest(err)
		return out
	}
	id, info, err := s.open(ctx, local, rl.Initiator, req.Params)
	if err != nil {
		out.Error = probe.Classify(err)
		return out
	}
	out.SessionID, out.Responder = id, info
	return out
}

func (s *Server) observe(err error) {
	if s.o.OnSession != nil {
		s.o.OnSession(err)
	}
}

// open builds and connects one responder half and starts its goroutine.
func (s *Server) open(ctx context.Context, local probe.Endpoint, initiator probe.QPInfo, p probe.TestParams) (string, probe.QPInfo, error) {
	sess, err := s.o.Fabric.Open(ctx, local, p)
	if err != nil {
		s.observe(err)
		return "", probe.QPInfo{}, err
	}
	info := sess.Info()
	var accept func(context.Context) error // RDMA CM: the connection completes after our reply
	if p.Connect == probe.ConnectRDMACM {
		info, accept, err = listenCM(ctx, sess, initiator)
	} else if err = sess.Connect(ctx, initiator); err == nil {
		// The reply is the initiator's only word on the path our answers
		// take (its rails' BackFlow), and a provider may know our QP's
		// source port only once connected (mlx5 hashes both QP numbers
		// into it). Through RDMA CM the connection completes after the
		// reply, so there the port is what Listen knew.
		info.UDPSport = sess.Info().UDPSport
	}
	if err != nil {
		_ = sess.Close()
		s.observe(err)
		return "", probe.QPInfo{}, err
	}
	if p.Connect == probe.ConnectRDMACM {
		s.served[1].Add(1)
	} else {
		s.served[0].Add(1)
	}
	id := newID()
	// The responder outlives the HTTP request that opened it, so it runs
	// under its own deadline, not the request's context.
	rctx, cancel := context.WithTimeout(context.Background(), p.Timeout*2)
	r := &responder{cancel: cancel, ended: make(chan struct{})}
	if !s.table.add(id, r) {
		cancel()
		_ = sess.Close()
		return "", probe.QPInfo{}, &probe.Error{Class: probe.ClassPeerLost, Cause: "worker is shutting down"}
	}
	go func() {
		defer s.table.remove(id)
		defer close(r.ended)
		defer cancel()
		defer sess.Close()
		var err error
		if accept != nil {
			err = accept(rctx)
		}
		if err == nil {
			err = sess.Respond(rctx, p)
		}
		if err != nil && rctx.Err() == nil {
			s.log.Debug("responder ended with error", "session", id, "err", err)
		} else {
			err = nil // the initiator closed the session: served normally
		}
		s.observe(err)
		if keepQP(err) {
			<-rctx.Done() // keep the QP alive until the initiator is done with it
		}
		if s.o.OnEnd != nil {
			s.o.OnEnd(id, err)
		}
	}()
	return id, info, nil
}

// keepQP says whether a responder that ended with err should hold its QP
// until the initiator closes the session. Not when the port or device is
// gone: the QP is useless, and holding it would keep a device that is
// being removed open (the kernel waits for every user).
func keepQP(err error) bool {
	return err == nil || probe.Classify(err).Class != probe.ClassPortDown
}

// listenCM is the responder's RDMA CM half before the reply: the reply's
// QP info and the accept step the responder goroutine runs.
func listenCM(ctx context.Context, sess fabric.Session, initiator probe.QPInfo) (probe.QPInfo, func(context.Context) error, error) {
	cs, ok := sess.(fabric.CMSession)
	if !ok {
		return probe.QPInfo{}, nil, &probe.Error{Class: probe.ClassInternal,
			Cause: "this worker's fabric cannot connect through RDMA CM",
			Fix:   "run the sweep with connect=exchange, or use the verbs fabric on this node"}
	}
	info, err := cs.Listen(ctx)
	if err != nil {
		return probe.QPInfo{}, nil, err
	}
	return info, func(ctx context.Context) error { return cs.Accept(ctx, initiator) }, nil
}

func (s *Server) handleClose(w http.ResponseWriter, r *http.Request) {
	req, err := ReadMessage(r, wire.SessionCloseMsg)
	if err != nil {
		wire.Refuse(w, r, http.StatusBadRequest, BadRequest(err))
		return
	}
	for i, id := range req.IDs {
		if s.o.OnClose != nil {
			var o *wire.SessionOutcome
			if i < len(req.Outcomes) {
				o = &req.Outcomes[i]
			}
			s.o.OnClose(id, o)
		}
		s.table.close(id) // an unknown ID already ended (timeout); nothing to do
	}
	w.WriteHeader(http.StatusNoContent)
}
