package worker

import (
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// mergePorts keeps discovery's view (GID choice, reasons, checks) and takes
// from the fabric only what sysfs cannot tell. A port the fabric cannot open
// is unusable whatever sysfs says, and one the fabric does not list is
// dropped: we could not test it anyway. A port only the fabric lists, as
// unusable, is kept: a device that was removed is gone from sysfs, but its
// rails must show as down rather than vanish.
// stateRemoved is the state the verbs fabric gives the ports of a device
// it saw removed (an unregister event, or gone from the device list).
const stateRemoved = "REMOVED"

func mergePorts(found, fabric []probe.Port) []probe.Port {
	byKey := map[[2]any]probe.Port{}
	for _, p := range fabric {
		byKey[[2]any{p.Device, p.Port}] = p
	}
	out := make([]probe.Port, 0, len(found))
	for _, p := range found {
		f, ok := byKey[[2]any{p.Device, p.Port}]
		if !ok {
			continue
		}
		if p.MTU == 0 {
			p.MTU = f.MTU
		}
		if p.LID == 0 {
			p.LID = f.LID
		}
		if p.RateGbps == 0 {
			p.RateGbps = f.RateGbps
		}
		switch {
		case f.State == stateRemoved:
			// The engine saw the device go; what discovery still reads in
			// sysfs (a half-torn-down device, its node already gone) is
			// stale, and its findings would send the operator the wrong
			// way (a container's device nodes for a dead device).
			p.Usable, p.State = false, f.State
			// Discovery's failed checks and their fixes are stale too: the
			// one that counts is the engine's, the removal.
			p.FailedChecks = f.FailedChecks
			if p.UnusableWhy != "" && !strings.Contains(f.UnusableWhy, p.UnusableWhy) {
				p.UnusableWhy = f.UnusableWhy + "; discovery, before: " + p.UnusableWhy
			} else {
				p.UnusableWhy = f.UnusableWhy
			}
		case p.Usable && !f.Usable:
			p.Usable, p.UnusableWhy = false, f.UnusableWhy
		case !p.Usable && !f.Usable && f.UnusableWhy != "" && !strings.Contains(p.UnusableWhy, f.UnusableWhy):
			// Both refuse the port: keep the engine's words too, which
			// name the GID index or the netdev discovery's check does not.
			p.UnusableWhy += "; engine: " + f.UnusableWhy
		}
		out = append(out, p)
	}
	seen := map[[2]any]bool{}
	for _, p := range found {
		seen[[2]any{p.Device, p.Port}] = true
	}
	for _, f := range fabric {
		if !f.Usable && !seen[[2]any{f.Device, f.Port}] {
			out = append(out, f)
		}
	}
	return out
}
