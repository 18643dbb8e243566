package sim

import (
	"fmt"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// The constructors below word each failure the way the verbs provider does:
// the same class, verb, errno and WC status, and a fix an operator can act
// on. Causes may add what only the simulator knows (which end is faulted);
// classes never depend on it.

const wcRetryExceeded = 12 // IBV_WC_RETRY_EXC_ERR

func portDown(s PresetSpec, node, dev string) *probe.Error {
	fix := fmt.Sprintf("check the cable and the switch port of %s on %s; `ibstat %s` should show State: Active, Physical state: LinkUp", dev, node, dev)
	if s.roce() {
		fix += fmt.Sprintf("; `ip link show %s` and `ethtool %s` show the netdev side", s.netdev(s.deviceIndex(dev)), s.netdev(s.deviceIndex(dev)))
	}
	return &probe.Error{Class: probe.ClassPortDown, Verb: "ibv_query_port",
		Cause: fmt.Sprintf("%s port 1 on %s is DOWN (phys_state Disabled)", dev, node),
		Fix:   fix}
}

func cancelled(verb string, err error) *probe.Error {
	return &probe.Error{Class: probe.ClassTimeout, Verb: verb,
		Cause: "stopped before the test finished: " + err.Error(),
		Fix:   "the pair deadline or a shutdown ended the test; raise the pair timeout if rounds are cut short"}
}

func misuse(verb, cause string) *probe.Error {
	return &probe.Error{Class: probe.ClassInternal, Verb: verb, Errno: 22, Cause: cause,
		Fix: "report this as a bug with the worker log: the session was used out of order"}
}

// linkFix names the counters that show a lossy link on each link layer.
func linkFix(s PresetSpec) string {
	if s.roce() {
		return "check the cable/transceiver and the switch port at each end; rising counters in " +
			"`ethtool -S <netdev> | grep -Ei 'discard|err|pause|out_of_sequence'` and on the switch port point at the bad hop"
	}
	return "check the cable and the switch port at each end; rising SymbolErrorCounter, LinkDownedCounter or " +
		"PortRcvErrors in `perfquery -x` (or `ibqueryerrors`) point at the bad hop"
}

func retryExceeded(cause, fix string) *probe.Error {
	return &probe.Error{Class: probe.ClassRetryExceeded, Verb: "ibv_poll_cq", WCStatus: wcRetryExceeded,
		Cause: cause, Fix: fix}
}

func invalidGID(s PresetSpec, who, dev string, index int) *probe.Error {
	cause := fmt.Sprintf("RTR rejected GID index %d of %s on %s: the entry is empty or not a usable %s GID", index, dev, who, s.GIDType)
	fix := fmt.Sprintf("use GID index %d (%s) or -1 to let the worker choose; `show_gids` or "+
		"/sys/class/infiniband/%s/ports/1/gid_attrs/types/%d show the table", s.GIDIndex, s.GIDType, dev, index)
	return &probe.Error{Class: probe.ClassInvalidGID, Verb: "ibv_modify_qp(RTR)", Errno: 22, Cause: cause, Fix: fix}
}

func mtuMismatch(s PresetSpec, size, packet, pathMTU, carried int, where string) *probe.Error {
	fix := fmt.Sprintf("make every hop carry %d-byte packets plus headers: ", pathMTU)
	if s.roce() {
		fix += fmt.Sprintf("switch ports, bridges and netdevs at MTU %d (`ip link`), or lower the netdev MTU so RoCE negotiates a smaller active MTU (1500 → 1024)", s.NetdevMTU)
	} else {
		fix += "set the subnet MTU in the SM (opensm partitions.conf mtu=5 for 4096) and check each switch port with `ibportstate`"
	}
	return &probe.Error{Class: probe.ClassMTUMismatch, Verb: "ibv_poll_cq", WCStatus: wcRetryExceeded,
		Cause: fmt.Sprintf("large writes fail while small ones pass: %d-byte RDMA WRITEs (%d-byte packets, path MTU %d) %s "+
			"were never acknowledged, but writes of up to %d bytes get through; a hop drops bigger frames",
			size, packet, pathMTU, where, carried),
		Fix: fix}
}

// overTimeout replaces a failure that would arrive after the test's timeout:
// the real engine gives up polling first and reports a timeout.
func overTimeout(what string, need, limit time.Duration, under *probe.Error) *probe.Error {
	e := &probe.Error{Class: probe.ClassTimeout, Verb: "ibv_poll_cq",
		Cause: fmt.Sprintf("%s needs ~%s, longer than the %s timeout", what, need.Round(time.Millisecond), limit),
		Fix:   "lower latency_iters, bw_iters or bw_size, or raise the timeout"}
	if under != nil {
		e.Cause = fmt.Sprintf("no completion within %s: %s", limit, under.Cause)
		e.Fix = under.Fix
	}
	return e
}
