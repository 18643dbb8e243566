package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// explainPeerFailure runs when a test failed after the responder had
// accepted it. RDMA alone cannot tell a dead peer or a peer whose port just
// went down from a lossy path (all end in retries or silence), but the
// peer's API can: a worker that no longer answers died during the test,
// and one whose device health is bad lost its port.
func (a *Agent) explainPeerFailure(t wire.Task, rp probe.RailPair, err error) error {
	pe := probe.Classify(err)
	switch pe.Class {
	case probe.ClassRetryExceeded, probe.ClassTimeout, probe.ClassPeerLost, probe.ClassInternal:
	default:
		return err
	}
	h, alive := a.peerHealth(t.DstAPI)
	if !alive {
		return &probe.Error{Class: probe.ClassPeerLost, Verb: pe.Verb, Errno: pe.Errno, WCStatus: pe.WCStatus,
			Cause: fmt.Sprintf("worker %s stopped answering during the test, so its side vanished (%s)", t.Dst, pe.Cause),
			Fix:   fmt.Sprintf("check the host %s and its rdmamesh worker service (systemctl status rdmamesh-worker, or the pod's restarts)", t.Dst)}
	}
	if bad := peerPortBad(h, rp); bad != nil {
		return &probe.Error{Class: probe.ClassPortDown, Verb: pe.Verb, Errno: pe.Errno, WCStatus: pe.WCStatus,
			Cause: fmt.Sprintf("on %s: %s (here the test failed with: %s)", t.Dst, bad.Cause, pe.Cause),
			Fix:   fmt.Sprintf("on %s: %s", t.Dst, bad.Fix)}
	}
	if pe.Class == probe.ClassPeerLost {
		// The responder's writes stopped arriving, yet its worker answers
		// and its port is healthy: nothing died, so the path lost them.
		return &probe.Error{Class: probe.ClassTimeout, Verb: pe.Verb, Errno: pe.Errno, WCStatus: pe.WCStatus,
			Cause: fmt.Sprintf("%s, although worker %s is alive and its port is up: its writes are lost on the path (or its worker stalls)", pe.Cause, t.Dst),
			Fix:   "check link error counters on both ports and the switch (`ethtool -S`, `perfquery`) and PFC/ECN; if the links are clean, check the CPU load on " + t.Dst}
	}
	return err
}

// peerPortBad is the peer's device health entry that explains a failure on
// rp's destination port, if any.
func peerPortBad(h HealthReply, rp probe.RailPair) *probe.DeviceHealth {
	for i := range h.Devices {
		d := &h.Devices[i]
		if d.Device != rp.Dst.Device || d.State == probe.HealthOK {
			continue
		}
		if d.State == probe.HealthPortDown && !slices.Contains(d.DownPorts, max(rp.Dst.Port, 1)) {
			continue
		}
		return d
	}
	return nil
}

// peerHealth asks the peer's /v1/health with a short deadline of its own:
// the pair's deadline may already have passed. alive is false when the
// peer does not answer at all; an old peer without the endpoint counts as
// alive with no device news.
func (a *Agent) peerHealth(api string) (h HealthReply, alive bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.url(api, "/v1/health"), nil)
	if err != nil {
		return h, true
	}
	a.authorize(req)
	resp, err := a.client.Do(req)
	if err != nil {
		return h, false
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		_ = json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(&h)
	}
	return h, true
}
