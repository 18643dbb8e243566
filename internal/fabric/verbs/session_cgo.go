//go:build verbs && cgo

package verbs

/*
#include "engine.h"
#include "session_int.h"
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Session is one RC QP, its buffer and its CQ.
type Session struct {
	f      *Fabric
	dev    *device
	params probe.TestParams // sizes the buffer was laid out for
	port   int
	gid    gidEntry
	info   probe.QPInfo

	closing atomic.Bool
	aborted atomic.Pointer[probe.Error] // why the device watcher cancelled us
	mu      sync.Mutex                  // held by the C loops and by Close
	c       *C.rm_sess                  // nil once closed
	cc      *C.rm_sess                  // never changes: the cancel word stays reachable without mu
	gen     int64

	connected bool
	mtu       int // path MTU in bytes
	latencyOK bool
	sport     sportRule // how the driver picks the QP's UDP source port
	flowLabel uint32    // probe.Endpoint.FlowLabel: 0 lets the QP numbers pick the port
}

var (
	_ fabric.CMSession   = (*Session)(nil)
	_ fabric.ReadSession = (*Session)(nil)
)

// Info implements fabric.Session.
func (s *Session) Info() probe.QPInfo { return s.info }

func (s *Session) where(phase string, size int) where {
	return where{device: s.info.Device, port: s.port, gidIndex: s.gid.Index, netdev: s.gid.Netdev,
		size: size, mtu: s.mtu, latencyOK: s.latencyOK, phase: phase, node: s.info.Node}
}

func closedErr() *probe.Error {
	return &probe.Error{Class: probe.ClassInternal, Cause: "session already closed",
		Fix: "report this as a bug with the worker log"}
}

// abort fails the session for good with e (its port or device is gone):
// the loop in flight stops at its next check and every later call fails.
func (s *Session) abort(e *probe.Error) {
	if s.aborted.CompareAndSwap(nil, e) {
		C.rm_sess_cancel(s.cc, C.RM_CANCEL_ALL)
	}
}

// fail classifies a loop's failure, unless the watcher cancelled it: then
// the reason is the event, not the cancellation. A failure on a port that
// is down by now is reported as that: a dying port errors the QP (flushes,
// LOC_QP_OP_ERR) a moment before its event reaches the watcher.
func (s *Session) fail(f failure, w where) *probe.Error {
	if e := s.aborted.Load(); e != nil {
		return e
	}
	e := classify(f, w)
	if e.Class == probe.ClassPortDown || f.err == syscall.ECANCELED {
		return e
	}
	if down := s.f.portNotActive(s.dev, s.port); down != nil {
		down.Cause += " (the test itself failed with: " + e.Error() + ")"
		return down
	}
	return e
}

// Connect implements fabric.Session: INIT → RTR → RTS against the peer,
// from the exchanged QP info or, in RDMA CM mode, through the CM.
func (s *Session) Connect(ctx context.Context, remote probe.QPInfo) error {
	if err := ctx.Err(); err != nil {
		return &probe.Error{Class: probe.ClassTimeout, Cause: "connect: " + err.Error()}
	}
	if e := s.aborted.Load(); e != nil {
		return e
	}
	if s.params.Connect == probe.ConnectRDMACM {
		return s.connectCM(ctx, remote)
	}
	if s.connected {
		return &probe.Error{Class: probe.ClassInternal, Cause: "session already connected",
			Fix: "open a new session for another peer"}
	}
	if remote.LinkLayer != "" && remote.LinkLayer != s.info.LinkLayer {
		return &probe.Error{Class: probe.ClassInvalidGID, Verb: "ibv_modify_qp(RTR)",
			Cause: fmt.Sprintf("link layer mismatch: local %s, peer %s; an RC QP cannot span them", s.info.LinkLayer, remote.LinkLayer),
			Fix:   "test ports of the same link layer (rails must be all RoCE or all InfiniBand)"}
	}
	c := C.rm_conn{remote_qpn: C.uint32_t(remote.QPN), remote_psn: C.uint32_t(remote.PSN),
		local_psn: C.uint32_t(s.info.PSN), port: C.int(s.port), dlid: C.int(remote.LID),
		sgid_index: C.int(s.gid.Index), hop_limit: 64, flow_label: C.uint32_t(s.flowLabel),
		remote_addr: C.uint64_t(remote.Addr), remote_rkey: C.uint32_t(remote.RKey),
		remote_len: C.uint64_t(remote.Size)}
	s.mtu = pathMTU(s.info.MTU, remote.MTU)
	c.mtu = C.int(mtuEnum(s.mtu))
	dgid, err := parseGIDString(remote.GID)
	switch {
	case s.info.LinkLayer == "Ethernet" && err != nil:
		return &probe.Error{Class: probe.ClassInvalidGID, Verb: "ibv_modify_qp(RTR)",
			Cause: "the peer sent no usable GID: " + err.Error(), Fix: "check the peer's GID selection (its inventory)"}
	case needsGRH(s.info.LinkLayer == "Ethernet", dgid, err == nil, remote.LID, s.gid.Raw):
		c.global = 1
	}
	for i := range dgid {
		c.dgid[i] = C.uint8_t(dgid[i])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return closedErr()
	}
	var st C.rm_status
	if C.rm_sess_connect(s.c, &c, &st) != 0 {
		return s.fail(statusFailure(&st), s.where("connect", 0))
	}
	s.connected = true
	if s.sport == sportFlowLabel && c.global != 0 {
		s.info.UDPSport = probe.RoCEv2Sport(s.flowLabel, s.info.QPN, remote.QPN)
	}
	return nil
}

// run executes one C loop on a locked OS thread with a deadline and a
// cancel hook tied to ctx. The hook may fire while the loop runs; run waits
// for it before returning so it never touches a freed session.
func (s *Session) run(ctx context.Context, timeout time.Duration, phase string,
	loop func(gen C.int64_t, ns C.int64_t, st *C.rm_status) C.int) (failure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return failure{op: opPostSend, err: syscall.EBADF}, false
	}
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < timeout {
			timeout = left
		}
	}
	if ctx.Err() != nil {
		return failure{op: opWaitCQ, err: syscall.ECANCELED}, false
	}
	if timeout <= 0 {
		return failure{op: opWaitCQ, err: syscall.ETIMEDOUT}, false
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s.gen++
	gen := s.gen
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		C.rm_sess_cancel(s.cc, C.int64_t(gen))
	})
	var st C.rm_status
	rc := loop(C.int64_t(gen), C.int64_t(timeout.Nanoseconds()), &st)
	if !stop() {
		<-fired
	}
	if rc != 0 {
		return statusFailure(&st), false
	}
	return failure{}, true
}

func (s *Session) checkParams(p probe.TestParams) *probe.Error {
	if e := s.aborted.Load(); e != nil {
		return e
	}
	if err := p.Validate(); err != nil {
		return &probe.Error{Class: probe.ClassInternal, Cause: err.Error(), Fix: "fix the test parameters"}
	}
	if p.LatencySize != s.params.LatencySize || p.BWSize != s.params.BWSize {
		return &probe.Error{Class: probe.ClassInternal,
			Cause: "message sizes differ from the ones the session was opened with",
			Fix:   "open a new session for other sizes"}
	}
	if !s.connected {
		return &probe.Error{Class: probe.ClassInternal, Cause: "session not connected", Fix: "call Connect first"}
	}
	return nil
}

// Latency implements fabric.Session: the initiator half of the WRITE
// ping-pong; one-way latency is half of each round trip.
func (s *Session) Latency(ctx context.Context, p probe.TestParams) (probe.Latency, error) {
	if e := s.checkParams(p); e != nil {
		return probe.Latency{}, e
	}
	rtt := make([]int64, p.LatencyIters)
	f, ok := s.run(ctx, p.Timeout, "latency", func(gen, ns C.int64_t, st *C.rm_status) C.int {
		return C.rm_sess_latency(s.c, C.int(p.Warmup), C.int(p.LatencyIters),
			(*C.int64_t)(unsafe.Pointer(&rtt[0])), ns, gen, st)
	})
	if !ok {
		return probe.Latency{}, s.fail(f, s.where("latency", p.LatencySize))
	}
	s.latencyOK = true
	samples := make([]float64, len(rtt))
	for i, r := range rtt {
		samples[i] = float64(r) / 2
	}
	return probe.Summarize(samples), nil
}

// ReadLatency implements fabric.ReadSession: RDMA READ round trips of
// p.LatencySize bytes, like ib_read_lat (not halved). The responder takes
// no part beyond keeping its QP, so it runs between the ping-pong and the
// bandwidth stream.
func (s *Session) ReadLatency(ctx context.Context, p probe.TestParams) (probe.Latency, error) {
	if e := s.checkParams(p); e != nil {
		return probe.Latency{}, e
	}
	if p.ReadIters < 1 {
		return probe.Latency{}, &probe.Error{Class: probe.ClassInternal, Cause: "READ latency requested with read_iters 0",
			Fix: "set read_iters, or skip the READ phase"}
	}
	rtt := make([]int64, p.ReadIters)
	f, ok := s.run(ctx, p.Timeout, "read latency", func(gen, ns C.int64_t, st *C.rm_status) C.int {
		return C.rm_sess_read_latency(s.c, C.int(p.Warmup), C.int(p.ReadIters),
			(*C.int64_t)(unsafe.Pointer(&rtt[0])), ns, gen, st)
	})
	if !ok {
		return probe.Latency{}, s.fail(f, s.where("read latency", p.LatencySize))
	}
	samples := make([]float64, len(rtt))
	for i, r := range rtt {
		samples[i] = float64(r)
	}
	return probe.Summarize(samples), nil
}

// Bandwidth implements fabric.Session: a unidirectional RDMA WRITE stream
// with p.TxDepth writes in flight, timed from the first post to the last
// completion, as ib_write_bw reports its average.
func (s *Session) Bandwidth(ctx context.Context, p probe.TestParams) (probe.Bandwidth, error) {
	if e := s.checkParams(p); e != nil {
		return probe.Bandwidth{}, e
	}
	if p.BWSize == 0 {
		return probe.Bandwidth{}, &probe.Error{Class: probe.ClassInternal, Cause: "bandwidth requested with bw_size 0",
			Fix: "set bw_size, or skip the bandwidth phase"}
	}
	var out C.rm_bw_out
	f, ok := s.run(ctx, p.Timeout, "bandwidth", func(gen, ns C.int64_t, st *C.rm_status) C.int {
		return C.rm_sess_bandwidth(s.c, C.int(p.BWIters), C.int(p.TxDepth), ns, gen, &out, st)
	})
	if !ok {
		return probe.Bandwidth{}, s.fail(f, s.where("bandwidth", p.BWSize))
	}
	sec := float64(out.ns) / 1e9
	bw := probe.Bandwidth{Bytes: int64(out.bytes), Duration: sec}
	if sec > 0 {
		bw.Gbps = float64(out.bytes) * 8 / sec / 1e9
		bw.MsgRate = float64(out.msgs) / sec
	}
	return bw, nil
}

// Respond implements fabric.Session: answer every ping, then, when the test
// has a bandwidth phase, wait for the initiator's end-of-stream marker.
// Each phase gets p.Timeout (bounded by ctx).
func (s *Session) Respond(ctx context.Context, p probe.TestParams) error {
	if e := s.checkParams(p); e != nil {
		return e
	}
	wait := C.int(0)
	if p.BWSize > 0 {
		wait = 1
	}
	f, ok := s.run(ctx, p.Timeout, "respond", func(gen, ns C.int64_t, st *C.rm_status) C.int {
		return C.rm_sess_respond(s.c, C.int(p.Warmup), C.int(p.LatencyIters), wait, ns, gen, st)
	})
	if !ok {
		return s.fail(f, s.where("respond", p.LatencySize))
	}
	return nil
}

// Close implements fabric.Session. It first cancels any loop in flight (so
// a concurrent Close never waits out a deadline), then frees QP, MR, CQ
// and buffer, and drops the session's hold on the device.
func (s *Session) Close() error {
	if !s.closing.CompareAndSwap(false, true) {
		return nil
	}
	C.rm_sess_cancel(s.cc, C.RM_CANCEL_ALL)
	s.mu.Lock()
	C.rm_sess_close(s.c)
	s.c = nil
	s.mu.Unlock()
	s.f.mu.Lock()
	delete(s.f.sessions, s)
	s.f.mu.Unlock()
	s.f.release(s.dev)
	return nil
}
