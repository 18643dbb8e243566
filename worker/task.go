package worker

import (
	"context"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// RunTask measures Src → Dst on every rail of t at once (rail i ↔ rail i use
// disjoint HCAs, like NCCL's rings do) and returns one result per rail.
// It never fails as a whole: every problem lands in a rail's class.
func (a *Agent) RunTask(ctx context.Context, t probe.Task) probe.TaskResult {
	start := time.Now()
	if !t.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, t.Deadline)
		defer cancel()
	}
	res := probe.TaskResult{Version: probe.Version, SweepID: t.SweepID, Round: t.Round, Src: t.Src, Dst: t.Dst,
		Rails: make([]probe.RailResult, len(t.Rails))}
	var wg sync.WaitGroup
	for i, rp := range t.Rails {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Rails[i] = a.runRail(ctx, t, rp)
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res
}

func (a *Agent) runRail(ctx context.Context, t probe.Task, rp probe.RailPair) probe.RailResult {
	rr := probe.RailResult{Rail: rp.Rail, SrcDevice: rp.Src.Device, DstDevice: rp.Dst.Device,
		SrcGID: rp.Src.GIDIndex, DstGID: rp.Dst.GIDIndex}
	peerOpened := false
	fail := func(err error) probe.RailResult {
		if peerOpened {
			err = a.explainPeerFailure(t, rp, err)
		}
		if ctx.Err() != nil && probe.Classify(err).Class == probe.ClassInternal {
			err = &probe.Error{Class: probe.ClassTimeout, Cause: "the pair deadline passed before the test finished",
				Fix: "a slow or hung peer: check the worker on " + t.Dst + " and raise coordinator.pair_timeout if the fabric is just slow"}
		}
		rr.Error = probe.Classify(err)
		rr.Class = rr.Error.Class
		return rr
	}
	sess, err := a.opts.Fabric.Open(ctx, rp.Src, t.Params)
	if err != nil {
		return fail(err)
	}
	defer sess.Close()
	local := sess.Info()
	rr.SrcGID = local.GIDIndex
	peer, err := a.openPeer(ctx, t, rp, local)
	if err != nil {
		return fail(err)
	}
	defer a.closePeer(t.DstAPI, peer.SessionID)
	peerOpened = true
	rr.DstGID = peer.Responder.GIDIndex
	if err := sess.Connect(ctx, peer.Responder); err != nil {
		return fail(err)
	}
	lat, err := sess.Latency(ctx, t.Params)
	if err != nil {
		return fail(err)
	}
	rr.Latency = &lat
	if rr.ReadLatency, err = readLatency(ctx, sess, t.Params); err != nil {
		return fail(err)
	}
	if t.Params.BWSize > 0 {
		bw, err := sess.Bandwidth(ctx, t.Params)
		if err != nil {
			return fail(err)
		}
		rr.Bandwidth = &bw
	}
	rr.Class = probe.ClassOK
	if e := mtuMismatch(local, peer.Responder); e != nil {
		// Measured, but on a misconfigured pair: keep the figures.
		rr.Class, rr.Error = e.Class, e
	}
	return rr
}
