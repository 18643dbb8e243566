package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/member"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/rigs/scale"
	"github.com/rdmamesh/rdmamesh/worker"
)

// fleet is the large cluster's workers: real worker.Agents in this process
// (gossip on loopback with the cluster's key, the worker API behind its
// token), in the scale harness's control mode: a task is answered at once
// (scale.NullResult) instead of running the simulated test, so hundreds of
// them cost the coordinators what real hosts would and this process little.
//
// Each agent advertises an API listener of the fleet's own, whose handler
// answers POST /v1/tasks itself and hands everything else (inventory,
// health) to the agent's real handler. Every answer is written to the
// ledger, which is what the final matrices are checked against.
type fleet struct {
	fab    *sim.Fabric
	token  string
	key    []byte
	seeds  []string
	led    *ledger
	log    *slog.Logger
	byName map[string]int

	mu sync.Mutex
	ws []*fleetWorker
	// streamed and posted count the tasks answered on task streams and
	// as requests.
	streamed, posted atomic.Int64
}

type fleetWorker struct {
	name   string
	gossip string // fixed after the first start: memberlist refuses a known name at a new address
	agent  *worker.Agent
	srv    *http.Server
	// streams are the coordinators' task streams; a kill closes them as
	// the server's own connections.
	streams *wire.StreamServer
	api     string
	dead    atomic.Bool // killed: peers' tasks towards it come back peer-lost
}

func newFleet(n int, token string, key []byte, seeds []string, led *ledger, log *slog.Logger) (*fleet, error) {
	fab, err := sim.New(sim.Config{Preset: "ib-8x400", Seed: 1})
	if err != nil {
		return nil, err
	}
	f := &fleet{fab: fab, token: token, key: key, seeds: seeds, led: led, log: log, byName: map[string]int{}}
	for i := range n {
		name := fmt.Sprintf("node-%04d", i+1)
		f.byName[name] = i
		f.ws = append(f.ws, &fleetWorker{name: name, gossip: "127.0.0.1:0"})
	}
	return f, nil
}

// start brings every worker up, a few at a time: each joins gossip through
// the coordinators.
func (f *fleet) start(ctx context.Context) error {
	sem := make(chan struct{}, 8)
	errs := make(chan error, len(f.ws))
	var wg sync.WaitGroup
	for i := range f.ws {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs <- f.startOne(ctx, i)
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// startOne starts (or restarts) worker i.
func (f *fleet) startOne(ctx context.Context, i int) error {
	w := f.ws[i]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("%s: API listener: %w", w.name, err)
	}
	a, err := worker.Start(ctx, worker.Options{Name: w.name, Fabric: fabric.Adapt(f.fab.Node(w.name)),
		GossipBind: w.gossip, APIListen: "127.0.0.1:0", APIAdvertise: ln.Addr().String(), LAN: true,
		// Hundreds of agents share this host's two cores: relaxed gossip
		// timers and big packets, as the scale harness and the demo do.
		GossipTune: member.SharedHost, Token: f.token, GossipKey: f.key, Logger: f.log,
		Labels: map[string]string{"group": fmt.Sprintf("leaf-%02d", i/32+1)}})
	if err != nil {
		ln.Close()
		return fmt.Errorf("%s: %w", w.name, err)
	}
	streams := &wire.StreamServer{}
	srv := &http.Server{Handler: f.handler(i, a.Handler(), streams), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(f.log.Handler(), slog.LevelDebug)}
	go func() { _ = srv.Serve(ln) }()
	f.mu.Lock()
	w.agent, w.srv, w.streams, w.api, w.gossip = a, srv, streams, ln.Addr().String(), a.GossipAddr()
	f.mu.Unlock()
	w.dead.Store(false)
	if err := a.Join(f.seeds); err != nil {
		return fmt.Errorf("%s: join: %w", w.name, err)
	}
	return nil
}

// kill drops worker i off the network without a goodbye, like a crashed
// host: gossip stops answering, and its API refuses connections.
func (f *fleet) kill(i int) {
	w := f.ws[i]
	w.dead.Store(true)
	f.mu.Lock()
	a, srv, streams := w.agent, w.srv, w.streams
	w.agent, w.srv, w.streams = nil, nil, nil
	f.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
		streams.Close() // the server forgets the connections streams took over
	}
	if a != nil {
		a.Kill()
	}
}

// stop ends every worker.
func (f *fleet) stop() {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range f.ws {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f.kill(i)
		}()
	}
	wg.Wait()
}

// handler answers tasks in control mode, posted or on task streams, and
// passes the rest to the agent.
func (f *fleet) handler(i int, real http.Handler, streams *wire.StreamServer) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/tasks" && r.URL.Path != wire.StreamPath {
			real.ServeHTTP(rw, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+f.token {
			http.Error(rw, `{"error":{"class":"auth","cause":"bad token"}}`, http.StatusUnauthorized)
			return
		}
		conn := connOf(r)
		if r.URL.Path == wire.StreamPath {
			streams.Serve(rw, r, func(_ context.Context, task, out []byte, codes bool) ([]byte, byte) {
				if res, ok := f.answer(i, task, conn); ok {
					f.streamed.Add(1)
					return wire.ResultCodec(codes).Append(out, &res), wire.FrameResult
				}
				return wire.ErrorMsg.Append(out, badTask), wire.FrameError
			})
			return
		}
		if r.Header.Get("Content-Type") != wire.ContentType {
			wire.WriteError(rw, http.StatusUnsupportedMediaType, &probe.Error{Class: probe.ClassInternal, Cause: "decode request: wire tasks only"})
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			return
		}
		res, ok := f.answer(i, body, conn)
		if !ok {
			wire.WriteError(rw, http.StatusBadRequest, badTask)
			return
		}
		f.posted.Add(1)
		wire.Write(rw, http.StatusOK, wire.TaskResultMsg.Append(nil, &res))
	})
}

var badTask = &probe.Error{Class: probe.ClassInternal, Cause: "decode request: bad task"}

// answer is worker i's answer to a task that came on conn, written to the
// ledger; false when the bytes are not a task for i.
func (f *fleet) answer(i int, body []byte, conn connKey) (wire.TaskResult, bool) {
	t, err := wire.TaskMsg.Decode(body)
	if err != nil || t.Src != f.ws[i].name {
		return wire.TaskResult{}, false
	}
	res := scale.NullResult(t)
	if d, ok := f.byName[t.Dst]; ok && f.ws[d].dead.Load() {
		// What the real worker says when it cannot open the session
		// on its peer (worker/peer.go), or hand it the reverse half.
		e := &probe.Error{Class: probe.ClassPeerLost, Cause: fmt.Sprintf("cannot reach worker %s at %s: connection refused", t.Dst, t.DstAPI),
			Fix: fmt.Sprintf("check that the rdmamesh worker on %s is running", t.Dst)}
		for _, rails := range [][]wire.RailResult{res.Rails, reverseRails(res.Reverse)} {
			for k := range rails {
				rails[k].Class, rails[k].Error, rails[k].Latency = probe.ClassPeerLost, e, nil
			}
		}
	}
	f.led.answer(t, res, conn)
	if t.Reverse != nil && res.Reverse != nil {
		// The reverse half's cells; its send time is the pair task's.
		rev := wire.ReverseOf(&t)
		rev.Deadline = t.Deadline
		f.led.answer(rev, wire.TaskResult{SweepID: t.SweepID, Round: t.Round, Src: t.Dst, Dst: t.Src, Rails: res.Reverse.Rails}, conn)
	}
	return res, true
}

func reverseRails(r *wire.ReverseResult) []wire.RailResult {
	if r == nil {
		return nil
	}
	return r.Rails
}

// connOf is the connection r came on, for socketOwners.
func connOf(r *http.Request) connKey {
	port := func(addr string) uint16 {
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			return 0
		}
		n, _ := strconv.ParseUint(p, 10, 16)
		return uint16(n)
	}
	k := connKey{client: port(r.RemoteAddr)}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		k.server = port(a.String())
	}
	return k
}
