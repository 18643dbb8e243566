package worker

import (
	"context"
	"fmt"
	"net/http"
	"slices"
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
	a.live, a.liveAddrs, a.liveEpoch = r, la, map[string]int{}
	a.inv.Live = la
	a.mu.Unlock()
	if hr, ok := a.opts.Fabric.(HealthReporter); ok {
		a.noteEpochs(hr.Health(), nil)
	}
	rctx, cancel := context.WithCancel(context.Background())
	a.liveStop, a.liveDone = cancel, make(chan struct{})
	go func() {
		defer close(a.liveDone)
		_ = r.Run(rctx)
	}()
}

// reopenLive gives every rail whose device was removed and came back since
// its probe port opened (its health's Reopened count moved) a new probe
// port, and says whether any address changed: the inventory must then be
// republished, so the coordinator replans and the peers probe the new
// address. A rail whose port is not usable yet is tried again at the next
// health change.
func (a *Agent) reopenLive(ctx context.Context, hs []probe.DeviceHealth) bool {
	a.mu.Lock()
	r, ports := a.live, a.inv.Ports
	stale := map[int]bool{}
	for _, h := range hs {
		if h.Reopened == a.liveEpoch[h.Device] {
			continue
		}
		for _, p := range ports {
			if p.Device == h.Device {
				stale[p.Rail] = true
			}
		}
	}
	a.mu.Unlock()
	if r == nil || len(stale) == 0 {
		return false
	}
	addrs := r.Reopen(ctx, ports, stale)
	if len(addrs) == 0 {
		return false
	}
	a.mu.Lock()
	la := slices.Clone(a.liveAddrs)
	devs := map[string]bool{}
	for rail, ad := range addrs {
		devs[ad.Device] = true
		i := slices.IndexFunc(la, func(l probe.LiveAddr) bool { return l.Rail == rail })
		if i < 0 {
			continue
		}
		la[i] = probe.LiveAddr{Rail: rail, Device: ad.Device, GID: ad.GID, LID: ad.LID, QPN: ad.QPN, QKey: ad.QKey}
	}
	a.liveAddrs = la
	a.mu.Unlock()
	a.noteEpochs(hs, devs)
	a.log.Info("live probing: reopened the probe ports of devices that came back", "rails", len(addrs))
	return true
}

// noteEpochs records the devices' Reopened counts (only those in devs,
// when devs is not nil).
func (a *Agent) noteEpochs(hs []probe.DeviceHealth, devs map[string]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, h := range hs {
		if devs == nil || devs[h.Device] {
			a.liveEpoch[h.Device] = h.Reopened
		}
	}
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
