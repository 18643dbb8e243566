package worker

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/session"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/worker/live"
)

// startLive opens a probe port per usable port and runs the prober until
// the agent stops. Its addresses go into the inventory, where the
// coordinator finds them for the plan. A fabric that cannot open any probe
// port leaves live probing off and says so.
func (a *Agent) startLive(ctx context.Context) {
	r := live.New(a.opts.Name, a.opts.Prober, live.Options{}, a.log)
	addrs, err := r.Open(ctx, a.Inventory().Ports)
	if err != nil || len(addrs) == 0 {
		a.log.Warn("live probing off: no probe port could be opened", "err", err)
		return
	}
	var la []probe.LiveAddr
	for rail, ad := range addrs {
		la = append(la, probe.LiveAddr{Rail: rail, Device: ad.Device, GID: ad.GID, LID: ad.LID, QPN: ad.QPN, QKey: ad.QKey})
	}
	a.mu.Lock()
	a.live, a.liveAddrs = r, la
	a.inv.Live = la
	a.mu.Unlock()
	rctx, cancel := context.WithCancel(context.Background())
	a.liveStop, a.liveDone = cancel, make(chan struct{})
	go func() {
		defer close(a.liveDone)
		_ = r.Run(rctx)
	}()
}

func (a *Agent) stopLive() {
	if a.liveStop != nil {
		a.liveStop()
		<-a.liveDone
	}
}

// holdLive pauses probing on the task's rails while it runs, so neither
// disturbs the other's figures.
func (a *Agent) holdLive(t *wire.Task) func() {
	a.mu.Lock()
	r := a.live
	a.mu.Unlock()
	if r == nil {
		return func() {}
	}
	var release []func()
	for _, rp := range t.Rails {
		release = append(release, r.Hold(rp.Rail))
	}
	return func() {
		for _, f := range release {
			f()
		}
	}
}

// liveRunner is the agent's prober, or nil after refusing the request:
// a worker whose fabric opened no probe port has nothing to plan or report.
func (a *Agent) liveRunner(w http.ResponseWriter, r *http.Request) *live.Runner {
	a.mu.Lock()
	run := a.live
	a.mu.Unlock()
	if run == nil {
		wire.Refuse(w, r, http.StatusNotFound, &probe.Error{Class: probe.ClassSkipped,
			Cause: "this worker does not probe: its fabric opened no probe port", Fix: "see the worker's log at start"})
	}
	return run
}

// The coordinator pushes the plan and collects summaries; both are wire
// messages, like tasks.
func (a *Agent) handleLivePlan(w http.ResponseWriter, r *http.Request) {
	run := a.liveRunner(w, r)
	if run == nil {
		return
	}
	wp, err := session.ReadMessage(r, wire.LivePlanMsg)
	if err != nil {
		wire.Refuse(w, r, http.StatusBadRequest, session.BadRequest(err))
		return
	}
	pl, err := liveplan.FromWire(wp)
	if err != nil {
		wire.Refuse(w, r, http.StatusBadRequest, session.BadRequest(fmt.Errorf("live plan %d: %w", wp.ID, err)))
		return
	}
	run.SetPlan(pl)
	w.WriteHeader(http.StatusNoContent)
}

func (a *Agent) handleLiveSummaries(w http.ResponseWriter, r *http.Request) {
	run := a.liveRunner(w, r)
	if run == nil {
		return
	}
	since := int64(-1)
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			wire.Refuse(w, r, http.StatusBadRequest, session.BadRequest(fmt.Errorf("since=%q: want a window number", v)))
			return
		}
		since = n
	}
	latest, sums := run.Summaries(since)
	out := wire.LiveSummaries{PlanID: run.PlanID(), Latest: latest}
	for _, s := range sums {
		out.Summaries = append(out.Summaries, liveplan.WireSummary(s))
	}
	wire.Write(w, http.StatusOK, wire.LiveSummariesMsg.Append(nil, &out))
}
