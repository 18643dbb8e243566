package worker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/rdmamesh/rdmamesh/internal/member"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/selffault"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// handReverse runs a pair task's reverse half: once this worker measured
// Src → Dst, it asks Dst to measure Dst → Src as the coordinator would
// have (POST /v1/tasks, our token, the coordinator's ticket for that
// direction), so the coordinator sends one task a pair instead of two.
// It never fails as a whole: a peer it cannot reach or that does not
// answer in time gives every reverse rail that failure.
func (a *Agent) handReverse(ctx context.Context, t *wire.Task) *wire.ReverseResult {
	rt := wire.ReverseOf(t)
	// Answer the coordinator before it gives up on the pair (at twice the
	// pair timeout; the reverse deadline is 1.8 x, this 1.9 x), so a hung
	// peer costs the reverse cells and not the measured forward ones.
	if !rt.Deadline.IsZero() && !t.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, rt.Deadline.Add(rt.Deadline.Sub(t.Deadline)/9))
		defer cancel()
	}
	res, err := a.postPeerTask(ctx, t.DstAPI, &rt)
	if err != nil {
		out := &wire.ReverseResult{Rails: make([]wire.RailResult, len(rt.Rails))}
		for i, rp := range rt.Rails {
			out.Rails[i] = wire.RailResult{Rail: rp.Rail, SrcDevice: rp.Src.Device, DstDevice: rp.Dst.Device,
				SrcGID: rp.Src.GIDIndex, DstGID: rp.Dst.GIDIndex, Class: err.Class, Error: err}
		}
		if err.Class == probe.ClassTester {
			out.Tester = err
		}
		return out
	}
	return wire.ReverseResultOf(&res)
}

// postPeerTask hands t to its source worker, t.Src, at api (the pair
// task's DstAPI); failures come back classified as the coordinator would
// classify them.
func (a *Agent) postPeerTask(ctx context.Context, api string, t *wire.Task) (wire.TaskResult, *probe.Error) {
	var res wire.TaskResult
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, member.URL(a.opts.ClientTLS != nil, api, "/v1/tasks"),
		bytes.NewReader(wire.TaskMsg.Append(nil, t)))
	if err != nil {
		return res, probe.Classify(err)
	}
	req.Header.Set("Content-Type", wire.ContentType)
	a.authorize(req)
	resp, err := a.client.Do(req)
	if err != nil {
		if selffault.Note("connecting to worker "+t.Src, err) {
			return res, a.testerError()
		}
		if ctx.Err() != nil {
			return res, &probe.Error{Class: probe.ClassTimeout, Cause: fmt.Sprintf("worker %s did not finish the reverse test in time", t.Src),
				Fix: fmt.Sprintf("a hung test or an overloaded host: check the worker on %s", t.Src)}
		}
		return res, probe.Unreachable(a.gossipAlive(t.Src), t.Src, api, a.opts.Name, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return res, &probe.Error{Class: probe.ClassPeerLost, Cause: fmt.Sprintf("worker %s: reading the answer: %v", t.Src, err)}
	}
	if resp.StatusCode != http.StatusOK {
		if e, ok := wire.DecodeError(resp.Header.Get("Content-Type"), raw); ok {
			return res, e
		}
		return res, &probe.Error{Class: probe.ClassInternal, Cause: fmt.Sprintf("worker %s answered %s", t.Src, resp.Status)}
	}
	if res, err = wire.TaskResultMsg.Decode(raw); err != nil {
		return res, &probe.Error{Class: probe.ClassInternal, Cause: fmt.Sprintf("worker %s: bad task result: %v", t.Src, err)}
	}
	return res, nil
}
