//go:build verbs && cgo

package verbs

/*
#include <stdlib.h>
#include "engine.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Each device the engine has touched gets a watcher: one goroutine with a
// context of its own, reading the device's async events (port up/down,
// fatal errors) and checking, between events, that the device is still
// registered. A port or device that goes away marks the endpoint
// unhealthy: new sessions on it fail at once with port-down, sessions in
// flight are cancelled with the same cause, and the shared context is
// dropped so a device being removed is not held open by us. When the port
// comes back (PORT_ACTIVE) or the device reappears (polled every
// reopenEvery), the endpoint is healthy again and the next session opens a
// fresh context. Fabric.Close stops every watcher and waits for it.
const (
	registeredEvery = 500 * time.Millisecond // how often a quiet watcher checks the device is still there
	reopenEvery     = time.Second            // how often a gone device is looked for
)

// IBV_EVENT_* values the watcher acts on.
const (
	evDeviceFatal = 8
	evPortActive  = 9
	evPortErr     = 10
	evLIDChange   = 11
	evGIDChange   = 18
)

var eventNames = map[int]string{8: "IBV_EVENT_DEVICE_FATAL", 9: "IBV_EVENT_PORT_ACTIVE", 10: "IBV_EVENT_PORT_ERR",
	11: "IBV_EVENT_LID_CHANGE", 12: "IBV_EVENT_PKEY_CHANGE", 13: "IBV_EVENT_SM_CHANGE",
	17: "IBV_EVENT_CLIENT_REREGISTER", 18: "IBV_EVENT_GID_CHANGE"}

func eventName(t int) string {
	if n, ok := eventNames[t]; ok {
		return n
	}
	return fmt.Sprintf("event %d", t)
}

type watcher struct {
	f     *Fabric
	name  string
	stop  chan struct{}
	done  chan struct{}
	wakeR int // poll()ed by the C wait, so a stop is seen at once
	wakeW int
}

// ensureWatch starts the device's watcher once. Called with f.mu held.
func (f *Fabric) ensureWatch(name string) {
	if f.closed || f.watchers[name] != nil {
		return
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		f.health.note(name, 0, "cannot watch device events: "+err.Error())
		return
	}
	w := &watcher{f: f, name: name, stop: make(chan struct{}), done: make(chan struct{}), wakeR: p[0], wakeW: p[1]}
	f.watchers[name] = w
	go w.run()
}

// stopWatchers ends every watcher and waits for it. Called without f.mu.
func (f *Fabric) stopWatchers() {
	f.mu.Lock()
	ws := f.watchers
	f.watchers = map[string]*watcher{}
	f.mu.Unlock()
	for _, w := range ws {
		close(w.stop)
		_, _ = syscall.Write(w.wakeW, []byte{1})
	}
	for _, w := range ws {
		<-w.done
		syscall.Close(w.wakeR)
		syscall.Close(w.wakeW)
	}
}

func (w *watcher) stopped(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.stop:
		return true
	case <-t.C:
		return false
	}
}

func (w *watcher) run() {
	defer close(w.done)
	for {
		d := w.open()
		if d == nil {
			if w.stopped(reopenEvery) {
				return
			}
			continue
		}
		done := w.watch(d)
		C.rm_dev_close(d)
		if done {
			return
		}
	}
}

// open opens the watcher's own context, or returns nil while the device is
// absent. A device that comes back is reported healthy again.
func (w *watcher) open() *C.rm_dev {
	cname := C.CString(w.name)
	defer C.free(unsafe.Pointer(cname))
	var st C.rm_status
	d := C.rm_dev_open(cname, &st)
	if d == nil {
		return nil
	}
	if C.rm_dev_registered(d) == 0 {
		// Listed but already being unregistered: not back yet.
		C.rm_dev_close(d)
		return nil
	}
	// Ports may have changed while we were not looking: start from what
	// they say now, not from the last event.
	var down []portDownInfo
	for port := 1; port <= int(C.rm_dev_nports(d)); port++ {
		var rp C.rm_port
		if C.rm_port_query(d, C.int(port), &rp, &st) == 0 && rp.state != 4 {
			down = append(down, portDownInfo{port: port, err: w.f.portCause(w.name, port, int(rp.state), int(rp.phys_state), linkLayerName(int(rp.link_layer)))})
		}
	}
	if w.f.health.present(w.name, int(C.rm_dev_nports(d)), down) {
		w.f.notify()
	}
	return d
}

// watch reads events until the device goes away (false) or the watcher is
// stopped (true).
func (w *watcher) watch(d *C.rm_dev) bool {
	for {
		var ev C.rm_event
		var st C.rm_status
		switch C.rm_dev_event_wait(d, C.int(w.wakeR), C.int(registeredEvery/time.Millisecond), &ev, &st) {
		case 2:
			return true
		case 1:
			if w.event(int(ev._type), int(ev.port)) {
				return false
			}
		case 0:
			if C.rm_dev_registered(d) == 0 {
				w.gone(fmt.Sprintf("device %s was removed (its uverbs node is gone: `rdma link del`, driver unload or hot-unplug)", w.name), "removal")
				return false
			}
		default:
			select {
			case <-w.stop:
				return true
			default:
			}
			w.gone(fmt.Sprintf("device %s stopped delivering events (%s): treating it as gone", w.name, syscall.Errno(st.err)), "event error")
			return false
		}
	}
}

// event applies one async event; true means the device is lost.
func (w *watcher) event(t, port int) bool {
	f := w.f
	switch t {
	case evDeviceFatal:
		w.gone(fmt.Sprintf("device %s reported a fatal error (IBV_EVENT_DEVICE_FATAL): the HCA needs a reset", w.name), eventName(t))
		return true
	case evPortErr:
		cause := fmt.Sprintf("%s port %d went down (IBV_EVENT_PORT_ERR)", w.name, port)
		if nd := f.net.roceNetdev(f.sys, w.name, port); nd.name != "" {
			cause += "; " + nd.String()
		}
		e := &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_get_async_event", Cause: cause, Fix: f.portFix(w.name, port)}
		f.health.portDown(w.name, port, e, eventName(t))
		f.abortSessions(w.name, port, e)
	case evPortActive:
		f.health.portUp(w.name, port, eventName(t))
	default:
		f.health.event(w.name, eventName(t))
	}
	f.notify()
	return false
}

func (w *watcher) gone(cause, what string) {
	f := w.f
	e := &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_get_async_event", Cause: cause,
		Fix: "check `rdma link` and `ibv_devices`; rdmamesh reopens the device by itself when it is back"}
	f.health.removed(w.name, e, what)
	f.abortSessions(w.name, 0, e)
	f.closeProbes(w.name)
	f.dropDevice(w.name)
	f.notify()
}

// dropDevice forgets the shared context of a vanished device; sessions
// still holding it close it with their last reference.
func (f *Fabric) dropDevice(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.devs[name]; ok {
		delete(f.devs, name)
		f.unref(d)
	}
}

// abortSessions fails every session on dev (port 0: any port) with e.
func (f *Fabric) abortSessions(dev string, port int, e *probe.Error) {
	f.mu.Lock()
	var hit []*Session
	for s := range f.sessions {
		if s.info.Device == dev && (port == 0 || s.port == port) {
			hit = append(hit, s)
		}
	}
	f.mu.Unlock()
	for _, s := range hit {
		s.abort(e)
	}
}

// notify tells the owner (the worker) that health or ports changed; it
// never blocks, and changes that pile up are coalesced into one.
func (f *Fabric) notify() {
	select {
	case f.changes <- struct{}{}:
	default:
	}
}

// Changes delivers a value after any change of device health; read it and
// then call Health and Ports for the new state.
func (f *Fabric) Changes() <-chan struct{} { return f.changes }

// Health is what the watchers know about every device, sorted by name.
func (f *Fabric) Health() []probe.DeviceHealth { return f.health.list() }
