package verbs

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// healthBook is the watchers' shared record of device health. It is plain
// Go (no cgo) so its transitions are unit-tested; the watchers in
// health_cgo.go feed it.
type healthBook struct {
	mu   sync.Mutex
	now  func() time.Time
	devs map[string]*devHealth
}

type devHealth struct {
	nports   int
	removed  *probe.Error
	down     map[int]*probe.Error
	since    time.Time
	last     string
	lastAt   time.Time
	events   uint64
	reopened int
	note     string
}

type portDownInfo struct {
	port int
	err  *probe.Error
}

func newHealthBook(now func() time.Time) *healthBook {
	return &healthBook{now: now, devs: map[string]*devHealth{}}
}

func (h *healthBook) dev(name string) *devHealth {
	d, ok := h.devs[name]
	if !ok {
		d = &devHealth{down: map[int]*probe.Error{}, since: h.now()}
		h.devs[name] = d
	}
	return d
}

// present records a device seen (again) by its watcher with the ports that
// are down right now. It reports whether anything changed.
func (h *healthBook) present(name string, nports int, down []portDownInfo) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, known := h.devs[name]
	d := h.dev(name)
	changed := !known || d.removed != nil || len(down) != len(d.down)
	if d.removed != nil {
		d.removed = nil
		d.reopened++
		d.since = h.now()
	}
	d.nports = nports
	next := map[int]*probe.Error{}
	for _, p := range down {
		if d.down[p.port] == nil {
			changed = true
		}
		next[p.port] = p.err
	}
	d.down = next
	return changed
}

func (h *healthBook) seen(d *devHealth, ev string) {
	d.events++
	d.last, d.lastAt = ev, h.now()
}

func (h *healthBook) portDown(name string, port int, e *probe.Error, ev string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.dev(name)
	h.seen(d, ev)
	if len(d.down) == 0 {
		d.since = h.now()
	}
	d.down[port] = e
}

func (h *healthBook) portUp(name string, port int, ev string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.dev(name)
	h.seen(d, ev)
	if d.down[port] != nil {
		delete(d.down, port)
		d.since = h.now()
	}
}

func (h *healthBook) event(name, ev string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen(h.dev(name), ev)
}

func (h *healthBook) removed(name string, e *probe.Error, ev string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.dev(name)
	h.seen(d, ev)
	d.removed = e
	d.down = map[int]*probe.Error{}
	d.since = h.now()
}

// note keeps a problem of the watcher itself (it could not start).
func (h *healthBook) note(name string, _ int, msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dev(name).note = msg
}

// check is the fast path of Open: the recorded failure of an endpoint on a
// removed device or a port an event took down, or nil.
func (h *healthBook) check(name string, port int) *probe.Error {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := h.devs[name]
	if !ok {
		return nil
	}
	if d.removed != nil {
		return d.removed
	}
	return d.down[port]
}

// gone lists the removed devices with their port counts, so Ports can keep
// showing them (unusable) instead of letting them silently disappear.
func (h *healthBook) gone() map[string]removedDev {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]removedDev{}
	for name, d := range h.devs {
		if d.removed != nil {
			out[name] = removedDev{ports: max(d.nports, 1), err: d.removed}
		}
	}
	return out
}

type removedDev struct {
	ports int
	err   *probe.Error
}

func (h *healthBook) list() []probe.DeviceHealth {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]probe.DeviceHealth, 0, len(h.devs))
	for name, d := range h.devs {
		dh := probe.DeviceHealth{Device: name, State: probe.HealthOK, Ports: d.nports, Since: d.since,
			LastEvent: d.last, LastAt: d.lastAt, Events: d.events, Reopened: d.reopened, Cause: d.note}
		var causes []string
		switch {
		case d.removed != nil:
			dh.State, causes, dh.Fix = probe.HealthRemoved, []string{d.removed.Cause}, d.removed.Fix
		case len(d.down) > 0:
			dh.State = probe.HealthPortDown
			for p, e := range d.down {
				dh.DownPorts = append(dh.DownPorts, p)
				causes = append(causes, e.Cause)
				dh.Fix = e.Fix
			}
			slices.Sort(dh.DownPorts)
			slices.Sort(causes)
		}
		if len(causes) > 0 {
			dh.Cause = strings.Join(causes, "; ")
		}
		out = append(out, dh)
	}
	slices.SortFunc(out, func(a, b probe.DeviceHealth) int { return strings.Compare(a.Device, b.Device) })
	return out
}
