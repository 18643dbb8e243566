package verbs

import (
	"fmt"
	"syscall"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// RDMA CM event types (enum rdma_cm_event_type) that end a wait badly.
const (
	cmNone          = -1
	cmAddrError     = 1
	cmRouteError    = 3
	cmConnectError  = 6
	cmUnreachable   = 7
	cmRejected      = 8
	cmDisconnected  = 10
	cmDeviceRemoval = 11
)

var cmEventNames = map[int]string{0: "ADDR_RESOLVED", 1: "ADDR_ERROR", 2: "ROUTE_RESOLVED", 3: "ROUTE_ERROR",
	4: "CONNECT_REQUEST", 5: "CONNECT_RESPONSE", 6: "CONNECT_ERROR", 7: "UNREACHABLE", 8: "REJECTED",
	9: "ESTABLISHED", 10: "DISCONNECTED", 11: "DEVICE_REMOVAL", 14: "ADDR_CHANGE", 15: "TIMEWAIT_EXIT"}

// IB CM reject reasons a REJECTED event carries in its status.
const (
	rejInvalidServiceID = 8  // nobody listens on that port
	rejConsumer         = 28 // the peer application said no (our reason in private data)
)

const cmToolsFix = "check `rdma link` and `ibv_devinfo` on both sides, and that rdma_ucm is loaded (/dev/infiniband/rdma_cm)"

// classifyCM maps a failure in RDMA CM mode. The CM reports most problems
// as an event instead of an errno, so the event decides first.
func classifyCM(f failure, w where, on string, set func(probe.Class, string, string) *probe.Error) *probe.Error {
	ev := fmt.Sprintf("RDMA_CM_EVENT_%s", cmEventNames[f.cmEvent])
	peer := w.peer
	if peer == "" {
		peer = "the peer"
	}
	switch f.cmEvent {
	case cmAddrError:
		if f.err == syscall.ENODEV || f.err == syscall.EADDRNOTAVAIL {
			return set(probe.ClassNoNetdev, fmt.Sprintf("RDMA CM found no RDMA device for the local address towards %s (%s, %s)", peer, ev, f.err),
				"give the RoCE netdev the IP the GID maps to, and make sure its rxe/HCA device exists in this network namespace")
		}
		return set(probe.ClassTimeout, fmt.Sprintf("RDMA CM could not resolve %s to a link address (%s, %s): ARP/neighbour lookup failed on the RoCE netdev", peer, ev, f.err),
			"check the peer's RoCE netdev is up and its IP answers ping from "+orDash(w.netdev)+"; check VLAN and subnet")
	case cmRouteError:
		return set(probe.ClassTimeout, fmt.Sprintf("RDMA CM found no route to %s (%s, %s)", peer, ev, f.err),
			"check the IP route to the peer leaves through the RoCE netdev ("+orDash(w.netdev)+")")
	case cmUnreachable:
		return set(probe.ClassRetryExceeded, fmt.Sprintf("the RDMA CM connect request to %s got no answer (%s, status %d): the path drops RoCE traffic, or the peer's port is down", peer, ev, f.cmStatus),
			"check both RoCE ports are ACTIVE, the peer is reachable over the RoCE netdev and nothing drops UDP 4791")
	case cmRejected:
		switch f.cmStatus {
		case rejInvalidServiceID:
			return set(probe.ClassPeerLost, fmt.Sprintf("nothing listens for RDMA CM at %s any more (%s, invalid service ID): the responder's session ended", peer, ev),
				"check the responder worker's log; its session may have timed out before we connected")
		case rejConsumer:
			return set(probe.ClassInternal, fmt.Sprintf("the responder at %s refused the connection (%s): the two sides were opened with different test sizes or devices", peer, ev),
				"run the same rdmamesh version on both sides")
		}
		return set(probe.ClassInternal, fmt.Sprintf("the RDMA CM connection to %s was rejected (%s, reason %d)", peer, ev, f.cmStatus), cmToolsFix)
	case cmConnectError:
		return set(probe.ClassInternal, fmt.Sprintf("the RDMA CM connection to %s failed (%s, status %d)", peer, ev, f.cmStatus), cmToolsFix)
	case cmDisconnected:
		return set(probe.ClassPeerLost, fmt.Sprintf("%s disconnected before the connection was set up (%s)", peer, ev), "check the peer worker's log")
	case cmDeviceRemoval:
		return set(probe.ClassPortDown, fmt.Sprintf("%s was removed while connecting (%s)", w.device, ev),
			"check `rdma link` / `ibv_devices`: the HCA or Soft-RoCE link went away")
	}
	switch f.op {
	case opCMLoad:
		return set(probe.ClassInternal, "the kernel's RDMA CM speaks another ABI: "+f.err.Error(),
			"run the sweep with connect=exchange")
	case opCMChannel:
		if f.err == syscall.ENOENT || f.err == syscall.ENODEV || f.err == syscall.ENXIO {
			return set(probe.ClassInternal, "the kernel RDMA CM is not available here: /dev/infiniband/rdma_cm is missing",
				"load rdma_ucm (`modprobe rdma_ucm`), pass /dev/infiniband/rdma_cm into the container, or run the sweep with connect=exchange")
		}
		if f.err == syscall.EACCES || f.err == syscall.EPERM {
			return set(probe.ClassResource, "no permission to open /dev/infiniband/rdma_cm",
				"give the worker access to /dev/infiniband/rdma_cm (device plugin, --device), or run the sweep with connect=exchange")
		}
		return set(probe.ClassInternal, "cannot use the RDMA CM ("+f.err.Error()+")",
			"load rdma_ucm (`modprobe rdma_ucm`) so /dev/infiniband/rdma_cm exists, and give the process access to it")
	case opCMBind:
		if f.err == syscall.EADDRNOTAVAIL || f.err == syscall.ENODEV || f.err == syscall.EINVAL {
			return set(probe.ClassNoNetdev, fmt.Sprintf("RDMA CM cannot listen on %s: no RDMA device owns that address (%s)", peer, f.err),
				"the GID's IP must sit on the RoCE netdev of "+w.device+"; check `ip addr` and `rdma link`")
		}
		return set(probe.ClassInternal, fmt.Sprintf("RDMA CM cannot listen on %s: %s", peer, f.err), cmToolsFix)
	case opCMDevice:
		return set(probe.ClassInvalidGID, fmt.Sprintf("RDMA CM bound the address of GID index %d to another device or port than %s", w.gidIndex, on),
			"in RDMA CM mode the IP decides the device: give each HCA its own IP and select the GID of that IP")
	case opCMQPAttr:
		return set(probe.ClassInternal, "rdma_init_qp_attr failed on "+on+": "+f.err.Error(), cmToolsFix)
	}
	if f.err == syscall.ETIMEDOUT {
		what := map[op]string{opCMResolveAddr: "resolving the peer's address", opCMResolveRt: "resolving the route",
			opCMConnect: "waiting for the peer to accept", opCMAccept: "waiting for the initiator to connect"}[f.op]
		return set(probe.ClassTimeout, fmt.Sprintf("RDMA CM: no progress %s (%s) before the deadline", what, peer),
			"check the peer worker is running and reachable over the RoCE network; raise the timeout if the fabric is just slow")
	}
	if f.err == syscall.EPROTO {
		return set(probe.ClassInternal, fmt.Sprintf("RDMA CM peer %s sent no rdmamesh handshake data", peer),
			"another program may be listening on that port, or the peer runs another rdmamesh version")
	}
	return set(probe.ClassInternal, fmt.Sprintf("%s towards %s failed: %s", opVerb[f.op], peer, f.err), cmToolsFix)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
