// Package pairtest is `rdmamesh probe`: one ad-hoc RDMA test between two
// hosts, the way ib_write_lat and ib_write_bw measure, over the same
// probe-session exchange the workers use in a sweep (internal/session).
// The listener serves the exchange's routes for one test (or, with Keep,
// for every test until stopped); the initiator opens its QP, asks the
// listener for the responder half, measures, and closes the session with
// what it measured, so both sides print the result.
package pairtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/session"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// DefaultPort is where a listener listens: perftest uses 18515, one above
// lets both run side by side.
const DefaultPort = "18516"

// Options are one side's settings.
type Options struct {
	// Endpoint is the local HCA port (Device "" = the fabric's first).
	Endpoint probe.Endpoint
	// Params is what the initiator measures; a listener follows the
	// initiator's.
	Params probe.TestParams
	// ConnectTimeout is how long an initiator keeps trying to reach a
	// listener that may still be starting.
	ConnectTimeout time.Duration
	JSON           bool // print the report as JSON
	Keep           bool // listener: serve tests until ctx ends
}

// ExitError carries the process exit code: 1 the test failed (already
// reported), 2 bad usage or a host that cannot run the test.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }
func (e *ExitError) ExitCode() int { return e.Code }

// ListenAddr completes a listen address: a bare port listens on every
// address, a bare host on DefaultPort.
func ListenAddr(addr string) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	if _, err := strconv.Atoi(addr); err == nil {
		return ":" + addr
	}
	return net.JoinHostPort(addr, DefaultPort)
}

// PeerAddr completes a peer address with DefaultPort.
func PeerAddr(addr string) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	return net.JoinHostPort(addr, DefaultPort)
}

// Listen listens on addr (see ListenAddr) and serves tests there.
func Listen(ctx context.Context, fab fabric.Fabric, o Options, addr string, out, errOut io.Writer) error {
	ln, err := net.Listen("tcp", ListenAddr(addr))
	if err != nil {
		return &ExitError{2, fmt.Errorf("listen: %w", err)}
	}
	return Serve(ctx, fab, o, ln, out, errOut)
}

// Serve serves tests on ln until one has ended (every one until ctx ends,
// with Keep), printing the responder's report of each to out. It closes ln.
func Serve(ctx context.Context, fab fabric.Fabric, o Options, ln net.Listener, out, errOut io.Writer) error {
	l := &listener{tests: map[string]*Report{}, done: make(chan *Report, 16)}
	srv := session.NewServer(session.ServerOptions{Fabric: fab,
		Endpoint: func(probe.Endpoint) (probe.Endpoint, error) { return o.Endpoint, nil },
		OnOpen:   l.opened, OnClose: l.closed, OnEnd: l.ended})
	mux := http.NewServeMux()
	srv.Register(mux)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var serveErr error // read once served is closed
	served := make(chan struct{})
	go func() { serveErr = hs.Serve(ln); close(served) }()
	defer func() {
		// Let a close in flight answer before the listener goes away.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		<-served
		srv.CloseAll()
	}()
	if !o.JSON {
		fmt.Fprintf(errOut, "rdmamesh probe: waiting for a peer on %s\n", ln.Addr())
	}
	for {
		select {
		case <-ctx.Done():
			// A test that ended just before the stop is still reported:
			// the select may pick the stop over a report already queued.
			for {
				select {
				case rep := <-l.done:
					if err := rep.Finish(out, o.JSON); err != nil {
						fmt.Fprintln(errOut, "rdmamesh probe:", err)
					}
				default:
					return nil
				}
			}
		case <-served:
			return &ExitError{1, fmt.Errorf("serve: %w", serveErr)}
		case rep := <-l.done:
			err := rep.Finish(out, o.JSON)
			if !o.Keep {
				return err
			}
			if err != nil {
				fmt.Fprintln(errOut, "rdmamesh probe:", err)
			}
		}
	}
}

// listener follows the tests its session server serves, by session ID.
type listener struct {
	mu    sync.Mutex
	tests map[string]*Report
	done  chan *Report
}

func (l *listener) opened(id string, req *wire.SessionOpen, rl *wire.SessionRail, got *wire.SessionRailOpen) {
	rep := &Report{Role: "responder", Params: req.Params, Remote: &rl.Initiator}
	if got.Error != nil {
		// The initiator hears this as its peer error; the responder reports
		// it as its own and the test is over.
		rep.Error = got.Error
		l.done <- rep
		return
	}
	rep.Local = got.Responder
	rep.PathMTU = min(rep.Local.MTU, rl.Initiator.MTU)
	l.mu.Lock()
	l.tests[id] = rep
	l.mu.Unlock()
}

func (l *listener) closed(id string, o *wire.SessionOutcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rep, ok := l.tests[id]
	if !ok {
		return
	}
	rep.closed = true
	if o != nil {
		rep.Latency, rep.ReadLat, rep.Bandwidth, rep.PeerError = o.Latency, o.ReadLatency, o.Bandwidth, o.Error
	}
}

func (l *listener) ended(id string, err error) {
	l.mu.Lock()
	rep, ok := l.tests[id]
	delete(l.tests, id)
	l.mu.Unlock()
	if !ok {
		return
	}
	if err != nil {
		rep.Error = probe.Classify(err)
	}
	if !rep.closed && rep.Error == nil {
		rep.PeerError = &probe.Error{Class: probe.ClassPeerLost,
			Cause: "the initiator did not close the session before its deadline (twice the test timeout): it stopped or lost its connection",
			Fix:   "check the other side's output; both must run the same rdmamesh version"}
	}
	l.done <- rep
}

// Run is the initiator: one test against the listener at peer.
func Run(ctx context.Context, fab fabric.Fabric, o Options, peer string, out io.Writer) error {
	p := o.Params
	rep := &Report{Role: "initiator", Params: p}
	sess, err := fab.Open(ctx, o.Endpoint, p)
	if err != nil {
		rep.Error = probe.Classify(err)
		return rep.Finish(out, o.JSON)
	}
	defer sess.Close()
	rep.Local = sess.Info()
	addr := PeerAddr(peer)
	if err := reach(ctx, addr, o.ConnectTimeout); err != nil {
		rep.Error = &probe.Error{Class: probe.ClassPeerLost, Cause: err.Error(),
			Fix: "start `rdmamesh probe --listen` on the peer and check TCP reachability"}
		return rep.Finish(out, o.JSON)
	}
	client := session.Client{HTTP: &http.Client{}, Self: "rdmamesh probe"}
	defer client.HTTP.CloseIdleConnections()
	// The listener picks its own port; the initiator only names itself.
	req := &wire.SessionOpen{SweepID: "probe", Src: rep.Local.Node, Dst: addr, Deadline: time.Now().Add(3*p.Timeout + 30*time.Second),
		Params: p, Rails: []wire.SessionRail{{Local: probe.Endpoint{GIDIndex: -1}, Initiator: rep.Local}}}
	octx, cancel := context.WithTimeout(ctx, p.Timeout+30*time.Second)
	opened, err := client.Open(octx, addr, req)
	cancel()
	if err == nil && opened.Rails[0].Error != nil {
		err = opened.Rails[0].Error
	}
	if err != nil {
		rep.PeerError = probe.Classify(err)
		return rep.Finish(out, o.JSON)
	}
	remote := opened.Rails[0].Responder
	rep.Remote, rep.PathMTU = &remote, min(rep.Local.MTU, remote.MTU)
	rep.Error = measure(ctx, sess, remote, p, rep)
	outcome := wire.SessionOutcome{Latency: rep.Latency, ReadLatency: rep.ReadLat, Bandwidth: rep.Bandwidth, Error: rep.Error}
	if err := client.Close(req.Src, addr, addr, &wire.SessionClose{IDs: []string{opened.Rails[0].SessionID},
		Outcomes: []wire.SessionOutcome{outcome}}); err != nil && rep.Error == nil {
		rep.PeerError = probe.Classify(err)
	}
	return rep.Finish(out, o.JSON)
}

// measure connects to the responder and runs what p asks for, filling rep.
func measure(ctx context.Context, sess fabric.Session, remote probe.QPInfo, p probe.TestParams, rep *Report) *probe.Error {
	if err := sess.Connect(ctx, remote); err != nil {
		return probe.Classify(err)
	}
	lat, err := sess.Latency(ctx, p)
	if err != nil {
		return probe.Classify(err)
	}
	rep.Latency = &lat
	if rs, ok := sess.(fabric.ReadSession); ok && p.ReadIters > 0 {
		rl, err := rs.ReadLatency(ctx, p)
		if err != nil {
			return probe.Classify(err)
		}
		rep.ReadLat = &rl
	}
	if p.BWSize > 0 {
		bw, err := sess.Bandwidth(ctx, p)
		if err != nil {
			return probe.Classify(err)
		}
		rep.Bandwidth = &bw
	}
	return nil
}

// reach waits until something accepts TCP connections at addr: the
// listener may still be starting.
func reach(ctx context.Context, addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("cannot reach listener at %s: %w", addr, err)
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// List prints the fabric's ports and the GID each would use.
func List(ctx context.Context, fab fabric.Fabric, asJSON bool, out io.Writer) error {
	ports, err := fab.Ports(ctx)
	if err != nil {
		return &ExitError{1, err}
	}
	if asJSON {
		return writeJSON(out, ports)
	}
	printPorts(out, ports)
	return nil
}
