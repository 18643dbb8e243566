package live

import (
	"context"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// railProbe is one HCA's probing: its port, the current targets and their
// trackers. The runner's ticker drives it; Hold changes it under mu.
type railProbe struct {
	rail int

	mu         sync.Mutex
	port       fabric.ProbePort // Reopen replaces it
	window     int64            // the window the targets belong to; -1 = re-target
	targets    []liveplan.Target
	trackers   map[target]*liveplan.Tracker
	credit     map[target]float64 // probes owed to each target
	held       int                // sweeps using the HCA now
	heldWindow bool               // some sweep held it this window
	down       *probe.Error       // the port refused a send this window
	buf        [64]fabric.Answer
}

// target is one tracked flow: a peer, and the flow label of a link flow
// (0 for group and rotation probes, which may go to the same peer).
type target struct {
	node  string
	label uint32
}

func keyOf(t liveplan.Target) target { return target{t.Node, t.Label} }

// tick sends what is due, expires old probes, and at a window boundary
// returns the finished window's summaries and re-targets.
func (rp *railProbe) tick(plan *liveplan.Plan, self string, now time.Time, dt time.Duration, timeout time.Duration) []liveplan.Summary {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	var fin []liveplan.Summary
	w, _ := plan.WindowAt(now)
	if w != rp.window {
		if rp.window >= 0 {
			fin = rp.flush()
		}
		rp.retarget(plan, self, now, w, timeout)
	}
	// Answers that arrived are counted before anything is declared lost,
	// so a late tick never turns an answered probe into a lost one.
	rp.drain()
	for _, tr := range rp.trackers {
		tr.Expire(now)
	}
	if rp.held > 0 {
		return fin
	}
	for _, t := range rp.targets {
		if t.Addr.Node == "" {
			continue // the target has no probe port (down, or not probing)
		}
		k := keyOf(t)
		to := t.Addr
		to.FlowLabel = t.Label
		c := rp.credit[k] + t.Rate*dt.Seconds()
		for ; c >= 1; c-- {
			seq := rp.trackers[k].Send(now)
			if err := rp.port.Send(to, seq); err != nil {
				// The probe stays pending and expires as lost; a port
				// that is down says so, or the fold would blame the path.
				if e := probe.Classify(err); e.Class == probe.ClassPortDown && rp.down == nil {
					rp.down = e
				}
				// Owed probes are dropped, not saved up: a port that
				// comes back must not burst a down spell's worth at once.
				c = 0
				break
			}
		}
		rp.credit[k] = c
	}
	return fin
}

// flush ends the window: one summary per target, marked when a sweep held
// the HCA during it.
func (rp *railProbe) flush() []liveplan.Summary {
	out := make([]liveplan.Summary, 0, len(rp.targets))
	for _, t := range rp.targets {
		s := rp.trackers[keyOf(t)].Flush(rp.window)
		s.Held, s.InGroup = rp.heldWindow, t.InGroup
		if rp.down != nil {
			s.LocalDown, s.LocalDownFix = rp.down.Cause, rp.down.Fix
		}
		out = append(out, s)
	}
	rp.heldWindow, rp.down = rp.held > 0, nil
	return out
}

// retarget takes the window's targets, keeping the trackers of targets
// that stay (probes in flight to them are still accounted) and starting
// new ones half a probe in credit, so a target is probed early in its
// window.
func (rp *railProbe) retarget(plan *liveplan.Plan, self string, now time.Time, w int64, timeout time.Duration) {
	rp.window = w
	rp.targets = plan.Targets(self, rp.rail, now)
	trackers := make(map[target]*liveplan.Tracker, len(rp.targets))
	credit := make(map[target]float64, len(rp.targets))
	for _, t := range rp.targets {
		k := keyOf(t)
		tr := rp.trackers[k]
		if tr == nil {
			tr = liveplan.NewFlowTracker(t.Node, rp.rail, t.Label, timeout)
		}
		trackers[k] = tr
		credit[k] = 0.5
		if c, ok := rp.credit[k]; ok {
			credit[k] = c
		}
	}
	rp.trackers, rp.credit = trackers, credit
}

// drain matches the answers the port holds to trackers, without waiting:
// the port timestamps answers itself, so when they are read does not
// change the round trips.
func (rp *railProbe) drain() {
	for {
		n, err := rp.port.Poll(doneCtx, rp.buf[:])
		for _, a := range rp.buf[:n] {
			if tr := rp.trackers[target{a.From.Node, fabric.SeqFlowLabel(a.Seq)}]; tr != nil {
				tr.Answer(a.Seq, a.RTT)
			}
		}
		if err != nil || n < len(rp.buf) {
			return
		}
	}
}

// doneCtx makes Poll return what is queued at once.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()
