package worker

import (
	"context"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// HealthReporter is a Fabric that watches its devices (the verbs engine
// reads each HCA's async events). The worker republishes its inventory on
// every change, so a port that goes down or a device that is removed shows
// up as unusable in gossip and on the API within moments, and comes back
// the same way.
type HealthReporter interface {
	// Health is the current state of every watched device.
	Health() []probe.DeviceHealth
	// Changes delivers a value after any change; changes are coalesced.
	Changes() <-chan struct{}
}

// healthRetry is how soon a failed inventory refresh is tried again.
var healthRetry = time.Second

// inventoryRescan is how often the inventory is read again without a
// device event: a netdev's MTU or address changes raise none, and a sweep
// must not judge a port by what it was an hour ago. A scan is sysfs reads,
// and a rescan that finds nothing new publishes nothing.
var inventoryRescan = 30 * time.Second

// startHealth runs the loop that republishes the inventory: on the
// fabric's device events when it reports health, and on every rescan;
// stop ends it through stopHealth.
func (a *Agent) startHealth() {
	hr, _ := a.opts.Fabric.(HealthReporter)
	ctx, cancel := context.WithCancel(context.Background())
	a.healthStop, a.healthDone = cancel, make(chan struct{})
	go a.watchHealth(ctx, hr)
}

func (a *Agent) stopHealth() {
	if a.healthStop != nil {
		a.healthStop()
		<-a.healthDone
	}
}

func (a *Agent) watchHealth(ctx context.Context, hr HealthReporter) {
	defer close(a.healthDone)
	// A failed refresh is retried on this timer: the devices may be in
	// the middle of changing, and a stale inventory must not stay.
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	rescan := time.NewTicker(inventoryRescan)
	defer rescan.Stop()
	var changes <-chan struct{}
	if hr != nil {
		changes = hr.Changes()
	}
	for {
		why := "device health changed"
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case <-retry.C:
		case <-rescan.C:
			why = "the inventory changed"
		}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		changed, err := a.refreshInventory(rctx)
		cancel()
		if err != nil {
			a.log.Warn(why+" but the inventory could not be refreshed; retrying", "err", err)
			retry.Reset(healthRetry)
			continue
		}
		if hr != nil && a.reopenLive(ctx, hr.Health()) {
			// Again, with the new probe addresses: the coordinator fetches
			// an inventory once per generation.
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			more, err := a.refreshInventory(rctx)
			cancel()
			if err != nil {
				a.log.Warn("probe ports reopened but the inventory could not be refreshed; retrying", "err", err)
				retry.Reset(healthRetry)
				continue
			}
			changed = changed || more
		}
		if !changed {
			continue
		}
		inv := a.Inventory()
		var devices string
		if hr != nil {
			devices = healthSummary(hr.Health())
		}
		a.log.Info(why+"; inventory republished", "generation", inv.Generation,
			"usable_ports", usablePorts(inv.Ports), "devices", devices)
		if a.ml != nil {
			// New meta (generation, usable ports) tells the coordinator to
			// fetch the inventory again.
			if err := a.ml.UpdateNode(5 * time.Second); err != nil {
				a.log.Debug("gossip meta update", "err", err)
			}
		}
	}
}

func usablePorts(ports []probe.Port) int {
	n := 0
	for _, p := range ports {
		if p.Usable {
			n++
		}
	}
	return n
}

func healthSummary(hs []probe.DeviceHealth) string {
	parts := make([]string, 0, len(hs))
	for _, h := range hs {
		s := h.Device + "=" + h.State
		if h.Cause != "" {
			s += " (" + h.Cause + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// HealthReply is GET /v1/health: device health from the fabric's watcher
// and the worker process's own resource use (the lab's churn test reads it
// to show nothing leaks).
type HealthReply struct {
	Node       string               `json:"node"`
	Generation uint64               `json:"generation"`
	Ports      int                  `json:"ports"`
	Usable     int                  `json:"usable_ports"`
	Devices    []probe.DeviceHealth `json:"devices,omitempty"`
	Process    ProcessStats         `json:"process"`
	// Served counts the responder sessions this worker set up, by
	// connection mode (the lab checks an RDMA CM sweep really used it).
	Served map[string]int64 `json:"served"`
	// Probes are the always-on probe ports' own counts (answers, drops,
	// foreign or malformed messages, completion errors, QP resets), when
	// the prober keeps them.
	Probes []probe.ProbePortStats `json:"probes,omitempty"`
}

// probeStatser is a prober that counts per probe port (the verbs engine).
type probeStatser interface {
	ProbeStats() []probe.ProbePortStats
}

// ProcessStats is what a leak shows up in.
type ProcessStats struct {
	Goroutines int   `json:"goroutines"`
	FDs        int   `json:"fds"`       // open file descriptors; -1 where /proc is missing
	RSSBytes   int64 `json:"rss_bytes"` // resident set; -1 where /proc is missing
	Sessions   int   `json:"sessions"`  // responder sessions open right now
}

func (a *Agent) handleHealth(w http.ResponseWriter, _ *http.Request) {
	inv := a.Inventory()
	rep := HealthReply{Node: a.opts.Name, Generation: inv.Generation, Ports: len(inv.Ports), Usable: usablePorts(inv.Ports),
		Process: ProcessStats{Goroutines: runtime.NumGoroutine(), FDs: countFDs(), RSSBytes: rss(), Sessions: a.sessions.Len()},
		Served:  a.sessions.Served()}
	if hr, ok := a.opts.Fabric.(HealthReporter); ok {
		rep.Devices = hr.Health()
	}
	if ps, ok := a.opts.Prober.(probeStatser); ok {
		rep.Probes = ps.ProbeStats()
	}
	writeJSON(w, http.StatusOK, rep)
}

func countFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents) - 1 // ReadDir's own descriptor
}

func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return -1
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return -1
	}
	return pages * int64(os.Getpagesize())
}
