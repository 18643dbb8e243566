//go:build verbs && cgo

package verbs

/*
#include "engine.h"
*/
import "C"

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

var _ fabric.Prober = (*Fabric)(nil)

const (
	udWaitMs   = 1000        // the poller's longest block on a quiet port (Close wakes it through the pipe)
	udCheckDue = time.Second // how often the QP's state and idle handles are checked
	udBatch    = 64          // completions taken per wait
)

// ProbePort is one HCA port's probe QP (fabric.ProbePort): a UD QP that
// sends probes, answers the peers' ones, and a poller goroutine it owns,
// stopped and waited for by Close.
type ProbePort struct {
	f    *Fabric
	dev  *device
	port int
	gid  gidEntry
	core *udCore[unsafe.Pointer]

	c            *C.rm_ud
	wakeR, wakeW int
	stop         chan struct{} // closed by Close, with a byte to wakeW for the C wait
	done         chan struct{}
	once         sync.Once

	mu     sync.RWMutex // Send holds it shared; Close exclusively, to free the QP
	closed bool
}

// OpenProbe implements fabric.Prober: a probe QP on (device, port) over
// the GID the fabric's policy picks, its poller running.
func (f *Fabric) OpenProbe(ctx context.Context, device string, port int) (fabric.ProbePort, error) {
	if err := ctx.Err(); err != nil {
		return nil, &probe.Error{Class: probe.ClassTimeout, Cause: "opening the probe port: " + err.Error()}
	}
	d, port, perr := f.acquirePort(device, port)
	if perr != nil {
		return nil, perr
	}
	p, perr := f.openProbe(d, port)
	if perr != nil {
		f.release(d)
		return nil, perr
	}
	return p, nil
}

func (f *Fabric) openProbe(d *device, port int) (*ProbePort, *probe.Error) {
	rp, ll, entries, perr := f.activePort(d, port)
	if perr != nil {
		return nil, perr
	}
	g, _, perr := chooseGID(d.name, port, ll, entries, f.gid)
	if perr != nil {
		return nil, perr
	}
	var pipe [2]int
	if err := syscall.Pipe2(pipe[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return nil, &probe.Error{Class: probe.ClassResource, Cause: "cannot make the probe port's wake pipe: " + err.Error(),
			Fix: "raise the open-files limit"}
	}
	var st C.rm_status
	c := C.rm_ud_open(d.c, C.int(port), C.int(g.Index), udQKey, &st)
	if c == nil {
		syscall.Close(pipe[0])
		syscall.Close(pipe[1])
		return nil, classify(statusFailure(&st), where{device: d.name, port: port, gidIndex: g.Index, netdev: g.Netdev, node: f.node})
	}
	p := &ProbePort{f: f, dev: d, port: port, gid: g, c: c, wakeR: pipe[0], wakeW: pipe[1],
		stop: make(chan struct{}), done: make(chan struct{})}
	self := fabric.ProbeAddr{Node: f.node, Device: d.name, GID: g.String(), LID: uint16(rp.lid),
		QPN: uint32(C.rm_ud_qpn(c)), QKey: udQKey}
	p.core = newUDCore[unsafe.Pointer](cLink{p}, self, g.Raw, ll == "Ethernet", rand.Uint64(), time.Now)
	f.mu.Lock()
	f.probes[p] = struct{}{}
	f.mu.Unlock()
	go p.run()
	return p, nil
}

// Addr implements fabric.ProbePort.
func (p *ProbePort) Addr() fabric.ProbeAddr { return p.core.self }

// Send implements fabric.ProbePort. A port an event took down fails at
// once with that port-down error (the runner counts the probe lost) rather
// than posting into a dead link.
func (p *ProbePort) Send(to fabric.ProbeAddr, seq uint64) error {
	if e := p.f.health.check(p.dev.name, p.port); e != nil {
		return e
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return &probe.Error{Class: probe.ClassInternal, Cause: "probe port closed"}
	}
	return p.core.send(to, seq, time.Now())
}

// Poll implements fabric.ProbePort.
func (p *ProbePort) Poll(ctx context.Context, buf []fabric.Answer) (int, error) {
	return p.core.poll(ctx, buf)
}

// Close implements fabric.ProbePort: stop the poller, wait for it, then
// free handles, QP and buffers and drop the hold on the device.
func (p *ProbePort) Close() error {
	p.once.Do(func() {
		close(p.stop)
		_, _ = syscall.Write(p.wakeW, []byte{1})
		<-p.done
		p.mu.Lock()
		p.closed = true
		// The QP first: destroying it ends every send still in flight,
		// and only then is no work request left pointing at a handle.
		C.rm_ud_close(p.c)
		p.c = nil
		p.core.ahs.close()
		p.mu.Unlock()
		syscall.Close(p.wakeR)
		syscall.Close(p.wakeW)
		p.f.mu.Lock()
		delete(p.f.probes, p)
		p.f.mu.Unlock()
		p.f.release(p.dev)
	})
	return nil
}

// run is the poller: answers peers' probes, queues answers to ours,
// replenishes receive buffers (in C, as it takes them) and once a second
// brings the QP back if it left RTS and drops idle address handles.
func (p *ProbePort) run() {
	defer close(p.done)
	buf := make([]C.rm_ud_cqe, udBatch)
	next := time.Now().Add(udCheckDue)
	for {
		var st C.rm_status
		n := int(C.rm_ud_wait(p.c, C.int(p.wakeR), udWaitMs, &buf[0], udBatch, &st))
		if n == -2 {
			return
		}
		if n < 0 {
			// The channel failed (device reset or removal): keep checking,
			// slowly, until Close; the fabric's watcher reports the device.
			e := classify(statusFailure(&st), where{}).Error()
			p.core.count(func(s *ProbeStats) { s.WCErr++; s.LastError, s.LastAt = e, time.Now() })
			if p.stopped(udCheckDue) {
				return
			}
			n = 0
		}
		for i := range buf[:n] {
			c := &buf[i]
			switch c.kind {
			case C.RM_UD_RECV:
				p.core.received(int64(c.ts), uint32(c.src_qp), unsafe.Slice((*byte)(unsafe.Pointer(&c.data[0])), int(c.len)))
			default:
				p.core.count(func(s *ProbeStats) { s.WCErr++ })
			}
		}
		if now := time.Now(); now.After(next) {
			next = now.Add(udCheckDue)
			if C.rm_ud_check(p.c, &st) == 1 {
				p.core.count(func(s *ProbeStats) { s.Resets++ })
			}
			p.core.sweep(now)
		}
	}
}

// stopped waits d for Close; true when it came.
func (p *ProbePort) stopped(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.stop:
		return true
	case <-t.C:
		return false
	}
}

// Stats is what the port counted besides answers (for debugging and the
// lab's checks).
func (p *ProbePort) Stats() ProbeStats { return p.core.snapshot() }

// ProbeStats is every open probe port's Stats, for the worker's health.
func (f *Fabric) ProbeStats() []probe.ProbePortStats {
	f.mu.Lock()
	ports := make([]*ProbePort, 0, len(f.probes))
	for p := range f.probes {
		ports = append(ports, p)
	}
	f.mu.Unlock()
	out := make([]probe.ProbePortStats, 0, len(ports))
	for _, p := range ports {
		s := p.Stats()
		out = append(out, probe.ProbePortStats{Device: p.dev.name, Port: p.port, Answers: s.Answers, Answered: s.Answered,
			Dropped: s.Dropped, Foreign: s.Foreign, Unknown: s.Unknown, Malformed: s.Malformed, ReplyErr: s.ReplyErr,
			WCErr: s.WCErr, Resets: s.Resets, LastError: s.LastError, LastAt: s.LastAt})
	}
	slices.SortFunc(out, func(a, b probe.ProbePortStats) int {
		return cmp.Or(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Port, b.Port))
	})
	return out
}

// cLink is the device half of the core: the C QP.
type cLink struct{ p *ProbePort }

func (l cLink) createAH(k ahKey) (unsafe.Pointer, error) {
	var gid [16]C.uint8_t
	for i, b := range k.GID {
		gid[i] = C.uint8_t(b)
	}
	global := C.int(0)
	if k.Global {
		global = 1
	}
	var st C.rm_status
	ah := C.rm_ud_ah(l.p.c, global, &gid[0], C.int(k.LID), C.uint32_t(k.Flow), &st)
	if ah == nil {
		return nil, classify(statusFailure(&st), where{device: l.p.dev.name, port: l.p.port, gidIndex: l.p.gid.Index,
			netdev: l.p.gid.Netdev, node: l.p.f.node, phase: "live probe"})
	}
	return ah, nil
}

func (l cLink) destroyAH(h unsafe.Pointer) { C.rm_ud_ah_free(h) }

func (l cLink) post(ah unsafe.Pointer, qpn, qkey uint32, msg []byte, stampOff int) error {
	var st C.rm_status
	if C.rm_ud_post(l.p.c, ah, C.uint32_t(qpn), C.uint32_t(qkey), (*C.uint8_t)(unsafe.Pointer(&msg[0])), C.int(len(msg)),
		C.int(stampOff), &st) != 0 {
		return classify(statusFailure(&st), where{device: l.p.dev.name, port: l.p.port, gidIndex: l.p.gid.Index,
			netdev: l.p.gid.Netdev, node: l.p.f.node, phase: "live probe"})
	}
	return nil
}

// closeProbes closes the probe ports on a device that is going away, so
// they do not hold it open (rxe's `rdma link del` waits for every
// context). Their runner's later sends fail and count as lost.
func (f *Fabric) closeProbes(dev string) {
	f.mu.Lock()
	var hit []*ProbePort
	for p := range f.probes {
		if p.dev.name == dev {
			hit = append(hit, p)
		}
	}
	f.mu.Unlock()
	for _, p := range hit {
		_ = p.Close()
	}
}
