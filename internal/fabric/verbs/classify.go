package verbs

import (
	"fmt"
	"syscall"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// op says where a failure happened. The values are shared with enum rm_op
// in engine.h; the cgo build checks them at compile time.
type op int

const (
	opNone          op = 0
	opLoad          op = 1
	opGetDeviceList op = 2
	opOpenDevice    op = 3
	opQueryDevice   op = 4
	opQueryPort     op = 5
	opQueryGID      op = 6
	opAllocPD       op = 7
	opRegMR         op = 8
	opCreateCQ      op = 9
	opCreateQP      op = 10
	opModifyInit    op = 11
	opModifyRTR     op = 12
	opModifyRTS     op = 13
	opPostSend      op = 14
	opPollCQ        op = 15
	opCompletion    op = 16
	opWaitPong      op = 17
	opWaitPing      op = 18
	opWaitDone      op = 19
	opWaitCQ        op = 20
	opAlloc         op = 21
	opAsyncEvent    op = 22
	opCMLoad        op = 23
	opCMChannel     op = 24
	opCMBind        op = 25
	opCMResolveAddr op = 26
	opCMResolveRt   op = 27
	opCMConnect     op = 28
	opCMAccept      op = 29
	opCMQPAttr      op = 30
	opCMDevice      op = 31
	opCreateAH      op = 32
	opCompChannel   op = 33
)

var opVerb = map[op]string{
	opLoad:          "dlopen(libibverbs.so.1)",
	opGetDeviceList: "ibv_get_device_list",
	opOpenDevice:    "ibv_open_device",
	opQueryDevice:   "ibv_query_device",
	opQueryPort:     "ibv_query_port",
	opQueryGID:      "ibv_query_gid",
	opAllocPD:       "ibv_alloc_pd",
	opRegMR:         "ibv_reg_mr",
	opCreateCQ:      "ibv_create_cq",
	opCreateQP:      "ibv_create_qp",
	opModifyInit:    "ibv_modify_qp(INIT)",
	opModifyRTR:     "ibv_modify_qp(RTR)",
	opModifyRTS:     "ibv_modify_qp(RTS)",
	opPostSend:      "ibv_post_send",
	opPollCQ:        "ibv_poll_cq",
	opCompletion:    "ibv_poll_cq",
	opWaitPong:      "wait for peer write",
	opWaitPing:      "wait for peer write",
	opWaitDone:      "wait for end of stream",
	opWaitCQ:        "wait for completion",
	opAlloc:         "posix_memalign",
	opAsyncEvent:    "ibv_get_async_event",
	opCMLoad:        "rdma_cm abi_version",
	opCMChannel:     "open(/dev/infiniband/rdma_cm)",
	opCMBind:        "rdma_bind_addr",
	opCMResolveAddr: "rdma_resolve_addr",
	opCMResolveRt:   "rdma_resolve_route",
	opCMConnect:     "rdma_connect",
	opCMAccept:      "rdma_accept",
	opCMQPAttr:      "rdma_init_qp_attr",
	opCMDevice:      "rdma_bind_addr",
	opCreateAH:      "ibv_create_ah",
	opCompChannel:   "ibv_get_cq_event",
}

// failure is what the C side reports (rm_status), in Go terms.
type failure struct {
	op   op
	err  syscall.Errno
	wc   int           // ibv_wc_status
	iter int64         // loop iteration reached
	done int64         // work requests completed before the failure
	idle time.Duration // at a deadline: time since the loop last advanced
	// RDMA CM only: the event that ended a wait (cmNone when none) and its
	// status (a negative errno, or the CM's reject reason).
	cmEvent  int
	cmStatus int
}

// stallLimit separates a slow run from a dead peer at a deadline: a loop
// that advanced within this long was still working.
const stallLimit = 2 * time.Second

// where is the context a cause needs to be specific.
type where struct {
	device    string
	port      int
	gidIndex  int
	netdev    string
	size      int  // message size of the failing loop
	mtu       int  // path MTU in bytes, 0 before Connect
	latencyOK bool // small writes already worked on this QP
	phase     string
	peer      string // RDMA CM: the address connected to or listened on
	node      string // this host, as the cause should name it
}

const memlockFix = "raise the locked-memory limit: `ulimit -l unlimited`, systemd LimitMEMLOCK=infinity, " +
	"or in a container add the IPC_LOCK capability and a memlock ulimit"

// WC status names from enum ibv_wc_status, for causes a human can search.
var wcNames = map[int]string{
	1: "LOC_LEN_ERR", 2: "LOC_QP_OP_ERR", 3: "LOC_EEC_OP_ERR", 4: "LOC_PROT_ERR",
	5: "WR_FLUSH_ERR", 6: "MW_BIND_ERR", 7: "BAD_RESP_ERR", 8: "LOC_ACCESS_ERR",
	9: "REM_INV_REQ_ERR", 10: "REM_ACCESS_ERR", 11: "REM_OP_ERR", 12: "RETRY_EXC_ERR",
	13: "RNR_RETRY_EXC_ERR", 14: "LOC_RDD_VIOL_ERR", 15: "REM_INV_RD_REQ_ERR",
	16: "REM_ABORT_ERR", 17: "INV_EECN_ERR", 18: "INV_EEC_STATE_ERR", 19: "FATAL_ERR",
	20: "RESP_TIMEOUT_ERR", 21: "GENERAL_ERR",
}

func wcName(s int) string {
	if n, ok := wcNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status %d", s)
}

// classify maps one C-side failure to the class, cause and fix an operator
// sees. Keep it a pure function: the table is tested without hardware.
func classify(f failure, w where) *probe.Error {
	e := &probe.Error{Verb: opVerb[f.op], Errno: int(f.err)}
	if f.op == opCompletion {
		e.Errno = 0
		e.WCStatus = f.wc
	}
	on := fmt.Sprintf("%s port %d", w.device, w.port)
	if w.node != "" {
		// The cause may travel to the other end of the test (a
		// responder's refusal lands in the initiator's cell).
		on = w.node + " " + on
	}
	set := func(c probe.Class, cause, fix string) *probe.Error {
		e.Class, e.Cause, e.Fix = c, cause, fix
		return e
	}

	if f.err == syscall.ECANCELED {
		return set(probe.ClassTimeout, fmt.Sprintf("%s cancelled by the caller after %d iterations", w.phase, f.iter),
			"the pair's deadline ended the test; raise the task timeout if the fabric is just slow")
	}
	switch f.op {
	case opGetDeviceList:
		if f.err == syscall.ENOSYS {
			return set(probe.ClassPortDown, "the kernel has no RDMA user-space support (ib_uverbs not loaded)",
				"load the HCA driver and ib_uverbs (e.g. `modprobe mlx5_ib ib_uverbs`, or `rdma link add rxe0 type rxe netdev eth0` for Soft-RoCE)")
		}
		return set(probe.ClassPortDown, "listing RDMA devices failed: "+f.err.Error(),
			"check /sys/class/infiniband and that ibverbs-providers (rdma-core) is installed")
	case opOpenDevice, opQueryDevice, opQueryPort:
		switch f.err {
		case syscall.EACCES, syscall.EPERM:
			return set(probe.ClassResource, "no permission to open "+w.device+" (/dev/infiniband/uverbs*)",
				"run as root, or give the user/container access to /dev/infiniband (rdma device plugin, --device)")
		case syscall.ENODEV, syscall.ENXIO, syscall.ENOENT, syscall.EIO:
			return set(probe.ClassPortDown, fmt.Sprintf("device %s is gone or has no user-space provider (%s)", w.device, f.err.Error()),
				"check `ibv_devices`; install ibverbs-providers (rdma-core) and reload the driver")
		}
		return set(probe.ClassPortDown, fmt.Sprintf("%s failed on %s: %s", opVerb[f.op], on, f.err.Error()),
			"check the device with `ibv_devinfo -d "+w.device+"`")
	case opQueryGID:
		return set(probe.ClassInvalidGID, fmt.Sprintf("reading the GID table of %s failed: %s", on, f.err.Error()),
			"check /sys/class/infiniband/"+w.device+"/ports/*/gids")
	case opAlloc:
		return set(probe.ClassResource, "out of host memory for the test buffers", "lower bw_size or free memory on the node")
	case opAllocPD, opCreateCQ, opCreateQP:
		switch f.err {
		case syscall.ENOMEM, syscall.EAGAIN:
			return set(probe.ClassResource, fmt.Sprintf("%s on %s: out of device resources or locked memory", opVerb[f.op], w.device), memlockFix)
		case syscall.EINVAL:
			return set(probe.ClassResource, fmt.Sprintf("%s on %s rejected the queue sizes (device limits)", opVerb[f.op], w.device),
				"lower tx_depth; see max_qp_wr/max_cqe in `ibv_devinfo -v`")
		}
		return set(probe.ClassInternal, fmt.Sprintf("%s on %s: %s", opVerb[f.op], w.device, f.err.Error()), "report this with `ibv_devinfo -v` output")
	case opRegMR:
		switch f.err {
		case syscall.ENOMEM, syscall.EAGAIN, syscall.EPERM:
			return set(probe.ClassResource, "ibv_reg_mr could not pin the test buffer: the locked-memory (memlock) limit is too low", memlockFix)
		}
		return set(probe.ClassResource, "ibv_reg_mr failed: "+f.err.Error(), memlockFix)
	case opModifyInit:
		return set(probe.ClassInternal, fmt.Sprintf("moving the QP to INIT on %s failed: %s", on, f.err.Error()),
			"check the port number exists (`ibv_devinfo -d "+w.device+"`)")
	case opModifyRTR, opCreateAH:
		// An address handle resolves the peer's GID like RTR does.
		return classifyRTR(f, w, on, set)
	case opModifyRTS:
		return set(probe.ClassInternal, fmt.Sprintf("moving the QP to RTS on %s failed: %s", on, f.err.Error()),
			"report this with `ibv_devinfo -v` output")
	case opCompletion:
		return classifyWC(f, w, on, set)
	case opWaitPong, opWaitPing, opWaitDone, opWaitCQ:
		return classifyWait(f, w, set)
	case opPostSend:
		return set(probe.ClassInternal, fmt.Sprintf("ibv_post_send on %s failed: %s (QP in error state or queue overflow)", on, f.err.Error()),
			"rerun; if it repeats, report it with the worker log")
	case opCompChannel:
		return set(probe.ClassInternal, fmt.Sprintf("waiting for completions on %s failed: %s", on, f.err.Error()),
			"the device may have been reset; check dmesg")
	case opPollCQ:
		return set(probe.ClassInternal, "ibv_poll_cq failed on "+on, "the device may have been reset; check dmesg")
	case opAsyncEvent:
		return set(probe.ClassInternal, fmt.Sprintf("reading device events of %s failed: %s", w.device, f.err.Error()),
			"the worker keeps testing but cannot see port changes; report this with dmesg")
	case opCMLoad, opCMChannel, opCMBind, opCMResolveAddr, opCMResolveRt, opCMConnect, opCMAccept, opCMQPAttr, opCMDevice:
		return classifyCM(f, w, on, set)
	}
	return set(probe.ClassInternal, fmt.Sprintf("unexpected failure (op %d, errno %d)", f.op, f.err), "report this with the worker log")
}

func classifyRTR(f failure, w where, on string, set func(probe.Class, string, string) *probe.Error) *probe.Error {
	gid := fmt.Sprintf("GID index %d", w.gidIndex)
	switch f.err {
	case syscall.EINVAL:
		return set(probe.ClassInvalidGID, fmt.Sprintf("%s rejected the address vector: %s on %s is missing or of the wrong type, or the peer's LID/GID is invalid", opVerb[f.op], gid, on),
			"use --gid auto (the IPv4-mapped RoCE v2 entry) or check `rdmamesh doctor`/show_gids for a populated RoCE v2 index on both sides")
	case syscall.ENODEV:
		return set(probe.ClassNoNetdev, fmt.Sprintf("%s on %s has no netdev in this network namespace (\"No such device\" at RTR)", gid, on),
			"give the container the RoCE netdev (macvlan/ipvlan/SR-IOV through multus) or pick a GID whose netdev is present; check `rdma system` netns mode")
	case syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.EADDRNOTAVAIL:
		// The kernel resolves the peer's IP with ARP/ND on the GID's
		// netdev; no answer means the request or reply was lost, the
		// peer's port is down, or this netdev does not reach the peer.
		dev := "its netdev"
		if w.netdev != "" {
			dev = w.netdev
		}
		return set(probe.ClassTimeout, fmt.Sprintf("resolving the peer's GID to a MAC via %s on %s failed (%s): the peer's IP did not answer ARP/neighbour discovery on %s, so packets are lost on that link, the peer's port is down, or %s does not reach the peer", gid, on, f.err.Error(), dev, dev),
			fmt.Sprintf("ping the peer's RoCE IP from %s (`ping -I %s PEER_IP`): loss there is the problem, so check link error counters and PFC/ECN; if nothing answers, make both sides use the IPv4 RoCE v2 GID on the netdev that routes to the peer", dev, dev))
	case syscall.EMSGSIZE:
		return set(probe.ClassInternal, "the peer registered a smaller buffer than this test needs: the two sides were opened with different sizes",
			"run both sides from the same rdmamesh version and parameters")
	}
	return set(probe.ClassInternal, fmt.Sprintf("%s on %s failed: %s", opVerb[f.op], on, f.err.Error()), "report this with `ibv_devinfo -v` output from both sides")
}

func classifyWC(f failure, w where, on string, set func(probe.Class, string, string) *probe.Error) *probe.Error {
	name := wcName(f.wc)
	switch f.wc {
	case 12: // RETRY_EXC_ERR
		if w.latencyOK && f.done == 0 && w.mtu > 0 && w.size > w.mtu {
			return set(probe.ClassMTUMismatch, fmt.Sprintf("small writes passed but %d-byte writes (path MTU %d) were never acknowledged (%s): a hop drops full-size frames", w.size, w.mtu, name),
				"make every switch/bridge MTU at least the RoCE netdev MTU plus headers (e.g. 9216), or lower the netdev MTU so the active RoCE MTU fits")
		}
		if f.iter == 0 && f.done == 0 {
			return set(probe.ClassRetryExceeded, fmt.Sprintf("the first write to the peer was never acknowledged (%s): the peer is unreachable on this GID, or RoCE v1/v2 types differ between the sides", name),
				"check both sides use the IPv4 RoCE v2 GID, that the peer IP is reachable from the GID's netdev, and that no ACL/VLAN drops UDP 4791")
		}
		return set(probe.ClassRetryExceeded, fmt.Sprintf("packets lost on the path after %d successful writes (%s): flaky link, congestion without PFC/ECN, or the peer went away", f.done+f.iter, name),
			"check link error counters on both ports and the switch (`ethtool -S`, `perfquery`), and PFC/ECN configuration")
	case 13: // RNR_RETRY_EXC_ERR
		return set(probe.ClassRetryExceeded, "the peer was never ready to receive ("+name+")", "check the peer worker is alive and its QP is still connected")
	case 5: // WR_FLUSH_ERR
		return set(probe.ClassPeerLost, "the QP went to the error state before this request ran ("+name+"), usually after the peer's QP vanished",
			"check the peer worker's log for the first failure")
	case 9: // REM_INV_REQ_ERR
		return set(probe.ClassInternal, fmt.Sprintf("the peer rejected a %d-byte write as an invalid request (%s): a length or opcode sequence it did not expect, e.g. a retransmission resumed mid-message (seen on Soft-RoCE under heavy load) or sides opened with different sizes", w.size, name),
			"rerun the pair; if it repeats, compare both sides' rdmamesh versions and the path MTU, and check the link for loss")
	case 10, 11, 15:
		return set(probe.ClassInternal, fmt.Sprintf("the peer rejected the write (%s): its buffer address, rkey or size does not match what was exchanged", name),
			"run both sides from the same rdmamesh version")
	}
	return set(probe.ClassInternal, fmt.Sprintf("work completion failed on %s with %s", on, name), "report this with the worker log and dmesg")
}

func classifyWait(f failure, w where, set func(probe.Class, string, string) *probe.Error) *probe.Error {
	// The retry-exceeded MTU signature, seen from a deadline instead: a
	// device that keeps retrying (or a deadline shorter than its retries)
	// never reports the loss, it just never completes a large write.
	if f.op == opWaitCQ && w.phase == "bandwidth" && f.err == syscall.ETIMEDOUT && f.done == 0 && w.latencyOK && w.mtu > 0 && w.size > w.mtu {
		return set(probe.ClassMTUMismatch, fmt.Sprintf("small writes passed but no %d-byte write (path MTU %d) completed before the deadline: a hop drops full-size frames", w.size, w.mtu),
			"make every switch/bridge MTU at least the RoCE netdev MTU plus headers (e.g. 9216), or lower the netdev MTU so the active RoCE MTU fits")
	}
	if f.err == syscall.ETIMEDOUT && f.iter > 0 && f.idle < stallLimit {
		return set(probe.ClassTimeout, fmt.Sprintf("%s was still running at the deadline (reached %d; last progress %s before it): the path or the host is slower than the timeout allows",
			w.phase, f.iter, f.idle.Round(time.Millisecond)),
			"raise the timeout or lower the iteration count; if this is new, look for a degraded link or an overloaded host")
	}
	switch {
	case f.op == opWaitPing && f.iter == 0:
		return set(probe.ClassTimeout, "the initiator's first write never arrived",
			"check the initiator is running and reaches this node over RDMA (GID, routing, UDP 4791)")
	case f.op == opWaitPing, f.op == opWaitDone:
		return set(probe.ClassPeerLost, fmt.Sprintf("the initiator stopped writing after %d iterations", f.iter),
			"check the initiator worker's log")
	case f.op == opWaitPong && f.iter == 0:
		return set(probe.ClassTimeout, "our first write completed but the responder never answered",
			"check the responder runs the same rdmamesh version and is polling (its worker log)")
	case f.op == opWaitPong:
		return set(probe.ClassPeerLost, fmt.Sprintf("the responder stopped answering after %d iterations", f.iter),
			"check the responder worker's log")
	}
	return set(probe.ClassTimeout, fmt.Sprintf("%s: no completion before the deadline (%d of the requests done)", w.phase, f.done),
		"the path may be dropping packets slower than the retry timeout; check link counters, or raise the timeout")
}

// portDown classifies a port that is present but not ACTIVE.
func portDown(dev string, port int, state, phys int, linkLayer string) *probe.Error {
	e := &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_query_port"}
	s := stateName(state)
	switch {
	case state == 2 && linkLayer == "InfiniBand":
		e.Cause = fmt.Sprintf("%s port %d is INIT: no subnet manager has configured it", dev, port)
		e.Fix = "start a subnet manager (opensm) on the fabric or check the switch's SM"
	case state == 3:
		e.Cause = fmt.Sprintf("%s port %d is ARMED: the subnet manager has not activated it yet", dev, port)
		e.Fix = "wait for the SM sweep, or check the SM log"
	default:
		e.Cause = fmt.Sprintf("%s port %d is %s (physical state %s)", dev, port, s, physName(phys))
		e.Fix = "check the cable and the peer port; directly cabled ports with different link layers (IB vs Ethernet) both show PORT_DOWN"
	}
	return e
}

func stateName(s int) string {
	switch s {
	case 1:
		return "DOWN"
	case 2:
		return "INIT"
	case 3:
		return "ARMED"
	case 4:
		return "ACTIVE"
	case 5:
		return "ACTIVE_DEFER"
	}
	return "NOP"
}

func physName(p int) string {
	names := map[int]string{1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining",
		5: "LinkUp", 6: "LinkErrorRecovery", 7: "PhyTest"}
	if n, ok := names[p]; ok {
		return n
	}
	return fmt.Sprintf("%d", p)
}
