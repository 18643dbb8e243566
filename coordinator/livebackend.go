package coordinator

import (
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// LiveInfo is web's and /metrics' header of the live mesh. It is cheap
// (no analysis): every open live event stream asks four times a second.
func (c *Coordinator) LiveInfo() api.LiveInfo {
	c.mesh.mu.Lock()
	defer c.mesh.mu.Unlock()
	return c.liveInfoLocked()
}

func (c *Coordinator) liveInfoLocked() api.LiveInfo {
	info := api.LiveInfo{Error: c.mesh.err}
	switch {
	case !c.opts.Live.Enabled:
		info.Error = "live probing is off (live.enabled)"
		return info
	case !c.IsLeader():
		info.Error = "this replica is not the raft leader; the live mesh runs on the leader"
		return info
	case c.mesh.plan == nil:
		if info.Error == "" {
			info.Error = "no live plan yet"
		}
		return info
	}
	pl := c.mesh.plan
	info.Enabled = true
	info.PlanID = pl.ID
	info.Members = len(pl.Members)
	info.WindowSeconds = pl.Params.Window.Seconds()
	info.CoverageSeconds = c.mesh.cov.Period.Seconds()
	info.RatePerHCA = pl.Params.RatePerHCA
	info.HorizonWindows = c.mesh.mx.Horizon()
	cutoff := time.Now().Add(-3 * pl.Params.Window)
	for _, t := range c.mesh.heard {
		if t.After(cutoff) {
			info.Probing++
		}
	}
	if w := c.mesh.judgedW; c.mesh.judged != nil {
		info.Window = w
		info.WindowStart = pl.Start.Add(time.Duration(w) * pl.Params.Window)
		info.AgeSeconds = max(0, time.Since(info.WindowStart.Add(pl.Params.Window)).Seconds())
		info.Cells = c.mesh.judged.NumCells() - c.mesh.judged.Counts[matrix.VerdictUntested]
		info.Healthy = c.mesh.judged.Healthy
		info.Suspects = len(c.mesh.judged.Suspects)
	}
	c.liveLinkInfo(&info)
	return info
}

// LiveMatrix is the live matrix as last judged (web.LiveBackend); the same
// pointer until a newer window is judged.
func (c *Coordinator) LiveMatrix() (*matrix.Matrix, api.LiveInfo, bool) {
	c.mesh.mu.Lock()
	defer c.mesh.mu.Unlock()
	info := c.liveInfoLocked()
	if !info.Enabled || c.mesh.judged == nil {
		return nil, info, false
	}
	return c.mesh.judged, info, true
}

// Live is LiveMatrix for /metrics (metrics.LiveSource); it reports the mesh
// even before its first judged window, so the collector can say it is on.
func (c *Coordinator) Live() (*matrix.Matrix, api.LiveInfo, bool) {
	c.mesh.mu.Lock()
	defer c.mesh.mu.Unlock()
	info := c.liveInfoLocked()
	return c.mesh.judged, info, info.Enabled
}

// LiveRails is each rail's probing as of the judged window
// (metrics.LiveSource); the slice is replaced, never changed.
func (c *Coordinator) LiveRails() []api.LiveRail {
	c.mesh.mu.Lock()
	defer c.mesh.mu.Unlock()
	return c.mesh.rails
}
