//go:build verbs && cgo

package verbs

/*
#cgo CFLAGS: -O2 -Wall
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "engine.h"
#include "session_int.h"
*/
import "C"

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// The op numbers are part of the C/Go contract; a mismatch fails the build
// here (a non-zero constant index into a one-element array).
var _ = [1]struct{}{}[C.RM_OP_LOAD-opLoad+C.RM_OP_GET_DEVICE_LIST-opGetDeviceList+
	C.RM_OP_OPEN_DEVICE-opOpenDevice+C.RM_OP_QUERY_DEVICE-opQueryDevice+C.RM_OP_QUERY_PORT-opQueryPort+
	C.RM_OP_QUERY_GID-opQueryGID+C.RM_OP_ALLOC_PD-opAllocPD+C.RM_OP_REG_MR-opRegMR+
	C.RM_OP_CREATE_CQ-opCreateCQ+C.RM_OP_CREATE_QP-opCreateQP+C.RM_OP_MODIFY_INIT-opModifyInit+
	C.RM_OP_MODIFY_RTR-opModifyRTR+C.RM_OP_MODIFY_RTS-opModifyRTS+C.RM_OP_POST_SEND-opPostSend+
	C.RM_OP_POLL_CQ-opPollCQ+C.RM_OP_COMPLETION-opCompletion+C.RM_OP_WAIT_PONG-opWaitPong+
	C.RM_OP_WAIT_PING-opWaitPing+C.RM_OP_WAIT_DONE-opWaitDone+C.RM_OP_WAIT_CQ-opWaitCQ+C.RM_OP_ALLOC-opAlloc+
	C.RM_OP_ASYNC_EVENT-opAsyncEvent+C.RM_OP_CM_LOAD-opCMLoad+C.RM_OP_CM_CHANNEL-opCMChannel+C.RM_OP_CM_BIND-opCMBind+
	C.RM_OP_CM_RESOLVE_ADDR-opCMResolveAddr+C.RM_OP_CM_RESOLVE_ROUTE-opCMResolveRt+C.RM_OP_CM_CONNECT-opCMConnect+
	C.RM_OP_CM_ACCEPT-opCMAccept+C.RM_OP_CM_QP_ATTR-opCMQPAttr+C.RM_OP_CM_DEVICE-opCMDevice+
	C.RM_OP_CREATE_AH-opCreateAH+C.RM_OP_COMP_CHANNEL-opCompChannel]

var (
	loadOnce sync.Once
	loadErr  error
)

// load opens libibverbs once per process, on first use, so merely linking
// this package never requires the library.
func load() error {
	loadOnce.Do(func() {
		var msg [512]C.char
		if C.rm_load(&msg[0], C.int(len(msg))) != 0 {
			loadErr = fmt.Errorf("%w: cannot load libibverbs (%s); install the RDMA user-space libraries "+
				"(Debian/Ubuntu: apt-get install ibverbs-providers; RHEL/Fedora: dnf install rdma-core)",
				ErrUnavailable, C.GoString(&msg[0]))
		}
	})
	return loadErr
}

// Fabric is the verbs provider. Device contexts and their protection
// domains are opened once and shared by all sessions on the device, so a
// sweep round pays only for the QP and buffer of each test.
type Fabric struct {
	opts   Options
	gid    gidPolicy
	sys    sysfs // /sys/class/infiniband
	net    sysfs // /sys/class/net
	node   string
	kernel string // release, for the drivers' source port rules (sport.go)

	health  *healthBook
	changes chan struct{} // coalesced "health changed" signal (Changes)

	mu       sync.Mutex
	devs     map[string]*device
	watchers map[string]*watcher
	sessions map[*Session]struct{}   // open sessions, so a lost port can cancel theirs
	probes   map[*ProbePort]struct{} // open probe ports, so a removed device is not held open by them
	closed   bool
}

type device struct {
	name string
	c    *C.rm_dev
	refs int // the cache's own reference plus one per open session
}

var _ fabric.Fabric = (*Fabric)(nil)

// New loads libibverbs and validates opts. It does not touch any device:
// a host with the library but no HCA gets a Fabric whose Ports is empty.
func New(opts Options) (*Fabric, error) {
	pol, err := opts.validate()
	if err != nil {
		return nil, err
	}
	if err := load(); err != nil {
		return nil, err
	}
	node, _ := os.Hostname()
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return &Fabric{opts: opts, gid: pol, node: node, kernel: strings.TrimSpace(string(kernel)),
		sys:    sysfs{root: os.DirFS("/sys/class/infiniband")},
		net:    sysfs{root: os.DirFS("/sys/class/net")},
		health: newHealthBook(time.Now), changes: make(chan struct{}, 1),
		devs: map[string]*device{}, watchers: map[string]*watcher{}, sessions: map[*Session]struct{}{},
		probes: map[*ProbePort]struct{}{}}, nil
}

// Name implements fabric.Fabric.
func (f *Fabric) Name() string { return "verbs" }

// Close stops the device watchers and releases the cached device
// contexts; sessions still open keep theirs until they are closed.
func (f *Fabric) Close() error {
	f.mu.Lock()
	f.closed = true
	for name, d := range f.devs {
		delete(f.devs, name)
		f.unref(d)
	}
	f.mu.Unlock()
	f.stopWatchers()
	return nil
}

func statusFailure(st *C.rm_status) failure {
	return failure{op: op(st.op), err: syscall.Errno(st.err), wc: int(st.wc_status),
		iter: int64(st.iter), done: int64(st.done), idle: time.Duration(st.idle_ns),
		cmEvent: int(st.cm_event) - 1, cmStatus: int(st.cm_status)}
}

// deviceNames lists the HCAs the library sees, in rail order.
func (f *Fabric) deviceNames() ([]string, *probe.Error) {
	buf := make([]C.char, 8192)
	var st C.rm_status
	n := C.rm_dev_names(&buf[0], C.int(len(buf)), &st)
	if n < 0 {
		return nil, classify(statusFailure(&st), where{})
	}
	names := strings.Fields(C.GoString(&buf[0]))
	if len(names) == 0 {
		if e := noProvider(f.sys, f.health.gone()); e != nil {
			return nil, e
		}
	}
	sortDevices(names)
	return names, nil
}

func (f *Fabric) acquire(name string) (*device, *probe.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.devs[name]; ok {
		d.refs++
		return d, nil
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var st C.rm_status
	c := C.rm_dev_open(cname, &st)
	if c == nil {
		return nil, classify(statusFailure(&st), where{device: name})
	}
	d := &device{name: name, c: c, refs: 1}
	if !f.closed {
		d.refs++
		f.devs[name] = d
	}
	f.ensureWatch(name)
	return d, nil
}

func (f *Fabric) release(d *device) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unref(d)
}

// invalidate drops a cached context that failed like a vanished device, so
// the next use reopens it (rxe links and VFs come and go).
func (f *Fabric) invalidate(d *device) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.devs[d.name] == d {
		delete(f.devs, d.name)
		f.unref(d)
	}
}

func (f *Fabric) unref(d *device) {
	d.refs--
	if d.refs == 0 {
		C.rm_dev_close(d.c)
		d.c = nil
	}
}

func (f *Fabric) queryPort(d *device, port int) (C.rm_port, *probe.Error) {
	var rp C.rm_port
	var st C.rm_status
	if C.rm_port_query(d.c, C.int(port), &rp, &st) != 0 {
		e := classify(statusFailure(&st), where{device: d.name, port: port})
		if e.Class == probe.ClassPortDown {
			f.invalidate(d)
		}
		return rp, e
	}
	return rp, nil
}

func (f *Fabric) gids(d *device, port int, rp C.rm_port) ([]gidEntry, *probe.Error) {
	tbl := int(rp.gid_tbl_len)
	if tbl <= 0 {
		return nil, nil
	}
	buf := make([]C.rm_gid, tbl)
	var st C.rm_status
	n := C.rm_gid_list(d.c, C.int(port), C.int(tbl), &buf[0], C.int(len(buf)), &st)
	if n < 0 {
		return nil, classify(statusFailure(&st), where{device: d.name, port: port})
	}
	out := make([]gidEntry, 0, n)
	for _, g := range buf[:n] {
		e := gidEntry{Index: int(g.index)}
		for i := range e.Raw {
			e.Raw[i] = byte(g.raw[i])
		}
		if g._type >= 0 {
			e.Type = gidTypeName(int(g._type))
			if g.ifindex > 0 {
				if ifc, err := net.InterfaceByIndex(int(g.ifindex)); err == nil {
					e.Netdev = ifc.Name
				}
			}
		} else {
			e.Type = f.sys.gidType(d.name, port, e.Index)
			e.Netdev = f.sys.gidNetdev(d.name, port, e.Index)
		}
		out = append(out, e)
	}
	return out, nil
}

// Ports implements fabric.Fabric: every port of every enabled device, in
// rail order, with the GID a test would use and why.
func (f *Fabric) Ports(ctx context.Context) ([]probe.Port, error) {
	names, perr := f.deviceNames()
	if perr != nil {
		return nil, perr
	}
	var out []probe.Port
	add := func(p probe.Port) {
		p.Rail = len(out)
		out = append(out, p)
	}
	gone := f.health.gone()
	for _, name := range sortedKeys(gone) {
		if slices.Contains(names, name) || (len(f.opts.Devices) > 0 && !slices.Contains(f.opts.Devices, name)) {
			continue
		}
		// A device that vanished stays in the list, unusable, so the
		// coordinator shows its rails as down instead of losing them.
		// Its failed check carries the removal's fix, which the rails'
		// cells quote (not "run the doctor": the doctor sees nothing).
		e := gone[name].err
		for port := 1; port <= gone[name].ports; port++ {
			add(probe.Port{Device: name, Port: port, State: "REMOVED", GIDIndex: -1, UnusableWhy: e.Cause,
				FailedChecks: []probe.Check{{Name: "device", Status: "fail", Cause: e.Cause, Fix: e.Fix}}})
		}
	}
	for _, want := range f.opts.Devices {
		if !slices.Contains(names, want) && gone[want].err == nil {
			add(probe.Port{Device: want, Port: 1, State: "MISSING", UnusableWhy: fmt.Sprintf(
				"device %s not found (have: %s); install ibverbs-providers or check the driver", want, strings.Join(names, ","))})
		}
	}
	for _, name := range names {
		if len(f.opts.Devices) > 0 && !slices.Contains(f.opts.Devices, name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return out, &probe.Error{Class: probe.ClassTimeout, Cause: "listing ports: " + err.Error()}
		}
		d, perr := f.acquire(name)
		if perr != nil {
			add(probe.Port{Device: name, Port: 1, State: "ERROR", UnusableWhy: perr.Error()})
			continue
		}
		for port := 1; port <= int(C.rm_dev_nports(d.c)); port++ {
			add(f.describePort(d, port))
		}
		f.release(d)
	}
	return out, nil
}

func (f *Fabric) describePort(d *device, port int) probe.Port {
	p := probe.Port{Device: d.name, Port: port, GIDIndex: -1}
	rp, perr := f.queryPort(d, port)
	if perr != nil {
		p.State = "ERROR"
		p.UnusableWhy = perr.Error()
		return p
	}
	p.LinkLayer = linkLayerName(int(rp.link_layer))
	p.State = stateName(int(rp.state))
	p.MTU = mtuBytes(int(rp.active_mtu))
	p.LID = uint16(rp.lid)
	if r, ok := f.sys.rate(d.name, port); ok {
		p.RateGbps = r
	} else {
		p.RateGbps = rateFromAttr(int(rp.active_width), int(rp.active_speed))
	}
	entries, gerr := f.gids(d, port, rp)
	var g gidEntry
	var why string
	if gerr == nil {
		g, why, gerr = chooseGID(d.name, port, p.LinkLayer, entries, f.gid)
	}
	if gerr == nil {
		p.GIDIndex, p.GID, p.GIDType, p.GIDReason = g.Index, g.String(), g.Type, why
		p.Netdev, p.IP = g.Netdev, g.ipv4()
	}
	switch {
	case int(rp.state) != 4:
		p.UnusableWhy = f.portCause(d.name, port, int(rp.state), int(rp.phys_state), p.LinkLayer).Error()
	case gerr != nil:
		p.UnusableWhy = gerr.Error()
	default:
		p.Usable = true
	}
	return p
}

// Open implements fabric.Fabric: the local half of a test (buffer, MR, CQ,
// QP in INIT) on ep, with the GID chosen and the port checked ACTIVE.
func (f *Fabric) Open(ctx context.Context, ep probe.Endpoint, p probe.TestParams) (fabric.Session, error) {
	if err := p.Validate(); err != nil {
		return nil, &probe.Error{Class: probe.ClassInternal, Cause: err.Error(), Fix: "fix the test parameters"}
	}
	if err := ctx.Err(); err != nil {
		return nil, &probe.Error{Class: probe.ClassTimeout, Cause: "opening the session: " + err.Error()}
	}
	name := ep.Device
	if name == "" {
		names, perr := f.deviceNames()
		if perr != nil {
			return nil, perr
		}
		for _, n := range names {
			if len(f.opts.Devices) == 0 || slices.Contains(f.opts.Devices, n) {
				name = n
				break
			}
		}
		if name == "" {
			return nil, &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_get_device_list", Cause: "no RDMA device found",
				Fix: "load the HCA driver (or `rdma link add rxe0 type rxe netdev eth0` for Soft-RoCE) and install ibverbs-providers"}
		}
	}
	d, port, perr := f.acquirePort(name, ep.Port)
	if perr != nil {
		return nil, perr
	}
	s, perr := f.open(d, port, ep, p)
	if perr != nil {
		f.release(d)
		return nil, perr
	}
	return s, nil
}

// activePort queries a port a session or probe port is opened on: it
// must exist and be ACTIVE; it returns its attributes, link layer and GIDs.
func (f *Fabric) activePort(d *device, port int) (C.rm_port, string, []gidEntry, *probe.Error) {
	if port > int(C.rm_dev_nports(d.c)) {
		return C.rm_port{}, "", nil, &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_query_port",
			Cause: fmt.Sprintf("%s has no port %d", d.name, port), Fix: "check `ibv_devinfo -d " + d.name + "`"}
	}
	rp, perr := f.queryPort(d, port)
	if perr != nil {
		return rp, "", nil, perr
	}
	ll := linkLayerName(int(rp.link_layer))
	if rp.state != 4 {
		return rp, ll, nil, f.portCause(d.name, port, int(rp.state), int(rp.phys_state), ll)
	}
	entries, perr := f.gids(d, port, rp)
	return rp, ll, entries, perr
}

func (f *Fabric) open(d *device, port int, ep probe.Endpoint, p probe.TestParams) (*Session, *probe.Error) {
	rp, ll, entries, perr := f.activePort(d, port)
	if perr != nil {
		return nil, perr
	}
	pol := f.gid
	if ep.GIDIndex >= 0 {
		pol = gidPolicy{index: ep.GIDIndex}
	}
	g, _, perr := chooseGID(d.name, port, ll, entries, pol)
	if perr != nil {
		return nil, perr
	}
	var st C.rm_status
	c := C.rm_sess_open(d.c, C.int(port), C.int(p.LatencySize), C.int(p.BWSize), C.int(p.TxDepth), &st)
	if c == nil {
		return nil, classify(statusFailure(&st), where{device: d.name, port: port, gidIndex: g.Index})
	}
	var qpn, rkey C.uint32_t
	var addr, size C.uint64_t
	C.rm_sess_info(c, &qpn, &addr, &rkey, &size)
	s := &Session{f: f, dev: d, c: c, cc: c, params: p, port: port, gid: g, flowLabel: ep.FlowLabel & fabric.FlowLabelMask,
		info: probe.QPInfo{Node: f.node, Device: d.name, Port: port, LinkLayer: ll,
			QPN: uint32(qpn), PSN: rand.Uint32() & 0xffffff, LID: uint16(rp.lid),
			GID: g.String(), GIDIndex: g.Index, GIDType: g.Type, MTU: mtuBytes(int(rp.active_mtu)),
			RKey: uint32(rkey), Addr: uint64(addr), Size: int(size)}}
	if ll == "Ethernet" {
		nd := f.net.roceNetdev(f.sys, d.name, port)
		s.info.Netdev, s.info.NetdevMTU = nd.name, nd.mtu
		if g.Type == "RoCE v2" {
			s.sport = f.sys.sportRuleOf(d.name, f.kernel)
		}
	}
	f.mu.Lock()
	f.sessions[s] = struct{}{}
	f.mu.Unlock()
	// The port may have gone down between the check above and now; the
	// watcher's abort only reaches registered sessions.
	if e := f.health.check(d.name, port); e != nil {
		s.Close()
		return nil, e
	}
	return s, nil
}

// portNotActive is the port-down error of a port that an event took down
// or that is not ACTIVE right now, or nil.
func (f *Fabric) portNotActive(d *device, port int) *probe.Error {
	if e := f.health.check(d.name, port); e != nil {
		return &probe.Error{Class: e.Class, Verb: e.Verb, Cause: e.Cause, Fix: e.Fix}
	}
	var rp C.rm_port
	var st C.rm_status
	if d.c == nil || C.rm_port_query(d.c, C.int(port), &rp, &st) != 0 || rp.state == 4 {
		return nil
	}
	return f.portCause(d.name, port, int(rp.state), int(rp.phys_state), linkLayerName(int(rp.link_layer)))
}

// portCause explains a port that is not ACTIVE; on RoCE it names the
// netdev, which is nearly always where the problem is.
func (f *Fabric) portCause(dev string, port, state, phys int, linkLayer string) *probe.Error {
	e := portDown(dev, port, state, phys, linkLayer)
	if linkLayer == "Ethernet" {
		if nd := f.net.roceNetdev(f.sys, dev, port); nd.name != "" {
			e.Cause += "; " + nd.String()
			e.Fix = f.portFix(dev, port)
		}
	}
	return e
}

func (f *Fabric) portFix(dev string, port int) string {
	nd := f.net.roceNetdev(f.sys, dev, port)
	if nd.name == "" {
		return "check the cable, the switch port and `ibv_devinfo -d " + dev + "`"
	}
	return fmt.Sprintf("bring %s up (`ip link set %s up`), then check its cable and switch port (`ethtool %s`)", nd.name, nd.name, nd.name)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// acquirePort is what a test session and a probe port both need first: the
// device enabled on this worker, the port (0 = 1) not taken down by an
// event, and the device acquired (the caller releases it). A port an event
// took down fails here, without a verb: the caller moves on instead of
// waiting out retries on a dead port.
func (f *Fabric) acquirePort(name string, port int) (*device, int, *probe.Error) {
	if len(f.opts.Devices) > 0 && !slices.Contains(f.opts.Devices, name) {
		return nil, 0, &probe.Error{Class: probe.ClassPortDown, Cause: "device " + name + " is not enabled on this worker",
			Fix: "add it to the worker's device list"}
	}
	if port == 0 {
		port = 1
	}
	if e := f.health.check(name, port); e != nil {
		return nil, 0, e
	}
	d, perr := f.acquire(name)
	if perr != nil {
		return nil, 0, perr
	}
	return d, port, nil
}
