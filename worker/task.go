package worker

import (
	"context"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/selffault"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// RunTask measures Src → Dst on every rail of t at once (rail i ↔ rail i use
// disjoint HCAs, like NCCL's rings do) and returns one result per rail.
// It never fails as a whole: every problem lands in a rail's class.
//
// It runs in phases so that the peer is asked once for all its halves:
// open the local halves (in parallel), open every remote half in one batch
// request, connect and measure (in parallel), then close the remote halves
// in one request and the local ones.
func (a *Agent) RunTask(ctx context.Context, t wire.Task) wire.TaskResult {
	start, faults := time.Now(), selffault.Count()
	if !t.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, t.Deadline)
		defer cancel()
	}
	rails := make([]railRun, len(t.Rails))
	for i, rp := range t.Rails {
		rails[i] = railRun{agent: a, rp: rp, rr: wire.RailResult{Rail: rp.Rail, SrcDevice: rp.Src.Device, DstDevice: rp.Dst.Device,
			SrcGID: rp.Src.GIDIndex, DstGID: rp.Dst.GIDIndex}}
	}
	defer func() {
		for i := range rails {
			if rails[i].sess != nil {
				_ = rails[i].sess.Close()
			}
		}
	}()
	each(rails, func(r *railRun) { r.open(ctx, a, t) })
	closeRemote := a.openRemote(ctx, t, rails)
	each(rails, func(r *railRun) { r.measure(ctx, t) })
	for i := range rails {
		rails[i].noteFlow()
	}
	closeRemote()
	res := wire.TaskResult{SweepID: t.SweepID, Round: t.Round, Src: t.Src, Dst: t.Dst,
		Rails: make([]wire.RailResult, len(rails))}
	for i := range rails {
		res.Rails[i] = rails[i].rr
	}
	a.counters.attachCounts(res.Rails, t.Rails)
	res.Elapsed = time.Since(start)
	if selffault.Count() != faults {
		a.markTester(&res)
	}
	return res
}

// markTester flags a task during which this process ran out of a resource:
// a failure then may be ours (an accept that never happened looks like a
// hung peer), so every failed rail becomes a tester fault and the whole
// result says so.
func (a *Agent) markTester(res *wire.TaskResult) {
	res.Tester = a.testerError()
	for i := range res.Rails {
		if rr := &res.Rails[i]; rr.Class.Failed() {
			rr.Class, rr.Error = probe.ClassTester, res.Tester
		}
	}
}

// testerError describes this process's newest resource failure.
func (a *Agent) testerError() *probe.Error {
	ev, _ := selffault.Last()
	return &probe.Error{Class: probe.ClassTester, Cause: ev.Cause("worker " + a.opts.Name), Fix: ev.Fix()}
}

// railRun is one rail of a task as it goes through the phases; once failed
// is set the later phases skip it.
type railRun struct {
	agent *Agent
	rp    probe.RailPair
	rr    wire.RailResult
	sess  fabric.Session
	local probe.QPInfo
	peer  probe.QPInfo
	// peerOpened: the remote half exists, so a failure may be the peer's
	// (its port went down, it died) rather than ours.
	peerOpened bool
	failed     bool
}

// each runs f on every rail not yet failed, all at once, and waits.
func each(rails []railRun, f func(*railRun)) {
	var wg sync.WaitGroup
	for i := range rails {
		if rails[i].failed {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(&rails[i])
		}()
	}
	wg.Wait()
}

func (r *railRun) fail(ctx context.Context, t wire.Task, err error) {
	if r.peerOpened {
		err = r.agent.explainPeerFailure(t, r.rp, err)
	}
	if ctx.Err() != nil && probe.Classify(err).Class == probe.ClassInternal {
		err = &probe.Error{Class: probe.ClassTimeout, Cause: "the pair deadline passed before the test finished",
			Fix: "a slow or hung peer: check the worker on " + t.Dst + " and raise coordinator.pair_timeout if the fabric is just slow"}
	}
	r.rr.Error = probe.Classify(err)
	r.rr.Class = r.rr.Error.Class
	r.failed = true
}

func (r *railRun) open(ctx context.Context, a *Agent, t wire.Task) {
	sess, err := a.opts.Fabric.Open(ctx, r.rp.Src, t.Params)
	if err != nil {
		r.fail(ctx, t, err)
		return
	}
	r.sess, r.local = sess, sess.Info()
	r.rr.SrcGID = r.local.GIDIndex
}

// noteFlow records the path the rail's test took, when its session
// opened: read after the test, as a provider may only know its QP's
// source port once connected (mlx5 hashes both QP numbers into it). A
// failed rail keeps it too: it says which links the failure crossed. The
// back flow, the path of the responder's pongs and acknowledgements, is
// the responder's port as its open answered it (0 when it did not open),
// the one this side connected to.
func (r *railRun) noteFlow() {
	if r.sess != nil {
		r.rr.Flow = r.sess.Info().UDPSport
	}
	r.rr.BackFlow = r.peer.UDPSport
}

// openRemote opens the peer's halves of the rails still going, in one
// request, and returns what closes them.
func (a *Agent) openRemote(ctx context.Context, t wire.Task, rails []railRun) func() {
	var want []wire.SessionRail
	var idx []int
	for i := range rails {
		if !rails[i].failed {
			want = append(want, wire.SessionRail{Rail: rails[i].rp.Rail, Local: rails[i].rp.Dst, Initiator: rails[i].local})
			idx = append(idx, i)
		}
	}
	if len(want) == 0 {
		return func() {}
	}
	reply, err := a.peers.Open(ctx, t.DstAPI, &wire.SessionOpen{SweepID: t.SweepID, Src: t.Src, Dst: t.Dst,
		Deadline: t.Deadline, Ticket: t.Ticket, Params: t.Params, Rails: want})
	if err != nil {
		for _, i := range idx {
			rails[i].fail(ctx, t, err)
		}
		return func() {}
	}
	var ids []string
	for k, i := range idx {
		got := reply.Rails[k]
		if got.Error != nil {
			rails[i].fail(ctx, t, got.Error)
			continue
		}
		ids = append(ids, got.SessionID)
		rails[i].peer, rails[i].peerOpened = got.Responder, true
		rails[i].rr.DstGID = got.Responder.GIDIndex
	}
	return func() {
		if err := a.peers.Close(t.Src, t.Dst, t.DstAPI, &wire.SessionClose{IDs: ids}); err != nil {
			a.log.Debug("close peer sessions", "api", t.DstAPI, "err", err)
		}
	}
}

func (r *railRun) measure(ctx context.Context, t wire.Task) {
	if err := r.sess.Connect(ctx, r.peer); err != nil {
		r.fail(ctx, t, err)
		return
	}
	lat, err := r.sess.Latency(ctx, t.Params)
	if err != nil {
		r.fail(ctx, t, err)
		return
	}
	r.rr.Latency = &lat
	if r.rr.ReadLatency, err = readLatency(ctx, r.sess, t.Params); err != nil {
		r.fail(ctx, t, err)
		return
	}
	if t.Params.BWSize > 0 {
		bw, err := r.sess.Bandwidth(ctx, t.Params)
		if err != nil {
			r.fail(ctx, t, err)
			return
		}
		r.rr.Bandwidth = &bw
	}
	// A pair whose ends' MTUs differ measured at the smaller one: it is a
	// measurement, and the matrix names the odd port from the inventories
	// (a configuration warning, not a failed cell).
	r.rr.Class = probe.ClassOK
}
