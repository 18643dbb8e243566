package wire

import (
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// The probe-session exchange between two workers (internal/session): the
// initiator opens the responder halves of every rail of a task in one
// request (POST /v1/sessions/batch) and closes them in one
// (POST /v1/sessions/close). `rdmamesh probe` speaks the same exchange.

// SessionOpen asks the target for the responder halves of rails.
type SessionOpen struct {
	SweepID  string
	Src      string
	Dst      string
	Deadline time.Time
	Ticket   string
	Params   probe.TestParams
	Rails    []SessionRail
}

// SessionRail is one rail of an open: the responder's endpoint and the
// initiator's QP.
type SessionRail struct {
	Rail      int
	Local     probe.Endpoint
	Initiator probe.QPInfo
}

// SessionOpened answers each rail of an open, in request order: a session,
// or the classified reason this rail's responder could not open.
type SessionOpened struct {
	Rails []SessionRailOpen
}

// SessionRailOpen is one rail's answer.
type SessionRailOpen struct {
	Rail      int
	SessionID string
	Responder probe.QPInfo
	Error     *probe.Error
}

// SessionClose ends sessions. Outcomes is empty, or says per ID what the
// initiator measured over it, for a responder that reports the test
// (`rdmamesh probe --listen`); workers leave it empty.
type SessionClose struct {
	IDs      []string
	Outcomes []SessionOutcome
}

// SessionOutcome is what one session measured, or why it failed.
type SessionOutcome struct {
	Latency     *probe.Latency
	ReadLatency *probe.Latency
	Bandwidth   *probe.Bandwidth
	Error       *probe.Error
}

// SessionOpenMsg is the open request's codec. Version 2 added the QPs' UDP
// source ports (QPInfo.UDPSport), so the responder knows which path the
// initiator's packets take and the initiator which one the answers take.
// Version 3 added each endpoint's flow label (probe.Endpoint.FlowLabel),
// which steers the responder's answers in a link sweep.
var SessionOpenMsg = &Codec[SessionOpen]{name: "session open", version: 3,
	put: func(w *writer, s *SessionOpen) {
		w.str(s.SweepID)
		w.str(s.Src)
		w.str(s.Dst)
		w.time(s.Deadline)
		w.str(s.Ticket)
		w.params(&s.Params)
		putList(w, s.Rails, func(w *writer, rl *SessionRail) {
			w.int(rl.Rail)
			w.endpoint(&rl.Local)
			w.qp(&rl.Initiator)
		})
	},
	get: func(r *reader, s *SessionOpen) {
		*s = SessionOpen{SweepID: r.str(), Src: r.str(), Dst: r.str(), Deadline: r.time(), Ticket: r.str(), Params: r.params()}
		s.Rails = getList(r, func(r *reader, rl *SessionRail) {
			*rl = SessionRail{Rail: r.int(), Local: r.endpoint(), Initiator: r.qp()}
		})
	}}

// SessionOpenedMsg is the open answer's codec; version 2 as the open's.
var SessionOpenedMsg = &Codec[SessionOpened]{name: "session opened", version: 2,
	put: func(w *writer, s *SessionOpened) {
		putList(w, s.Rails, func(w *writer, o *SessionRailOpen) {
			w.int(o.Rail)
			w.str(o.SessionID)
			w.qp(&o.Responder)
			w.error(o.Error)
		})
	},
	get: func(r *reader, s *SessionOpened) {
		s.Rails = getList(r, func(r *reader, o *SessionRailOpen) {
			*o = SessionRailOpen{Rail: r.int(), SessionID: r.str(), Responder: r.qp(), Error: r.error()}
		})
	}}

// SessionCloseMsg is the close request's codec.
var SessionCloseMsg = &Codec[SessionClose]{name: "session close", version: 1,
	put: func(w *writer, s *SessionClose) {
		w.strs(s.IDs)
		putList(w, s.Outcomes, func(w *writer, o *SessionOutcome) {
			w.latency(o.Latency)
			w.latency(o.ReadLatency)
			w.bandwidth(o.Bandwidth)
			w.error(o.Error)
		})
	},
	get: func(r *reader, s *SessionClose) {
		s.IDs = r.strs()
		s.Outcomes = getList(r, func(r *reader, o *SessionOutcome) {
			*o = SessionOutcome{Latency: r.latency(), ReadLatency: r.latency(), Bandwidth: r.bandwidth(), Error: r.error()}
		})
	}}

// ErrorMsg is the body of every non-2xx answer to a wire request, so the
// caller keeps the failure's class across the hop.
var ErrorMsg = &Codec[probe.Error]{name: "error", version: 1,
	put: (*writer).errorFields,
	get: (*reader).errorFields}
