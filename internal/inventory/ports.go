package inventory

import (
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// evaluation is every judgement about a host under one GID policy.
type evaluation struct {
	host  []finding
	ports []portEval
}

type portEval struct {
	ref      portRef
	sel      Selection
	selErr   error
	findings []finding
	mtu      int             // RoCE active MTU derived from the netdev; 0 for IB or unknown
	neighbor *probe.Neighbor // nil unless LookupNeighbors ran
}

func (h *Host) evaluate(pol GIDPolicy) evaluation {
	ev := evaluation{host: h.hostFindings()}
	for _, r := range h.rails() {
		sel, err := h.selectPort(r, pol)
		pe := portEval{ref: r, sel: sel, selErr: err, findings: h.portFindings(r, sel, err), neighbor: h.portNeighbor(r)}
		// Active MTU is not in sysfs; for RoCE the kernel derives it from
		// the netdev MTU. InfiniBand's stays 0 until verbs queries it.
		if r.port.LinkLayer == LayerEth {
			if nd, ok := h.Netdev(h.portNetdev(r, sel, err)); ok {
				pe.mtu = RoCEMTU(nd.MTU)
			}
		}
		ev.ports = append(ev.ports, pe)
	}
	return ev
}

// Checks returns the host-wide checks (environment, modules, device nodes,
// link-layer mix), ok ones included. Per-port checks travel on the ports.
func (h *Host) Checks() []probe.Check {
	return checksOf(h.hostFindings())
}

// Ports returns the published inventory shape, one entry per port in rail
// order (rail = position in natural device order, then port number).
// FailedChecks holds the port's checks that did not pass (warn or fail) and
// any failing host or device check that makes it untestable; Usable is false,
// with UnusableWhy, when such a failure (or a port not ACTIVE) means a test
// could only fail.
func (h *Host) Ports(pol GIDPolicy) []probe.Port {
	return h.evaluate(pol).probePorts()
}

// Inventory assembles the worker's self-description; the caller fills
// Generation, APIAddr, Provider and Labels.
func (h *Host) Inventory(node string, pol GIDPolicy) probe.Inventory {
	ev := h.evaluate(pol)
	return probe.Inventory{Version: probe.Version, Node: node, Ports: ev.probePorts(), Checks: checksOf(ev.host)}
}

func (ev evaluation) probePorts() []probe.Port {
	out := make([]probe.Port, 0, len(ev.ports))
	for _, pe := range ev.ports {
		out = append(out, pe.probePort(ev.host))
	}
	return out
}

func (pe portEval) probePort(host []finding) probe.Port {
	d, p := pe.ref.dev, pe.ref.port
	pp := probe.Port{
		Device:    d.Name,
		Port:      p.Num,
		Rail:      pe.ref.rail,
		LinkLayer: p.LinkLayer,
		State:     p.State.Name,
		RateGbps:  p.Rate.Gbps,
		LID:       p.LID,
		GIDIndex:  -1,
		Usable:    true,
	}
	if pe.selErr == nil {
		g := pe.sel.GID
		pp.GIDIndex, pp.GID, pp.GIDType, pp.GIDReason, pp.Netdev = g.Index, g.Addr.String(), g.Type, pe.sel.Reason, g.Netdev
		if ip := pe.sel.IP(); ip.IsValid() {
			pp.IP = ip.String()
		}
	} else {
		pp.GIDReason = pe.selErr.Error()
	}
	pp.MTU = pe.mtu
	if pe.neighbor != nil {
		n := *pe.neighbor // each published port owns its copy
		pp.Neighbor = &n
	}
	var blocking []finding
	for _, f := range pe.findings {
		if f.Status != StatusOK {
			pp.FailedChecks = append(pp.FailedChecks, f.Check)
		}
		if f.Status == StatusFail && f.blocks {
			blocking = append(blocking, f)
		}
	}
	for _, f := range host {
		if f.Status == StatusFail && f.blocks && (f.dev == "" || f.dev == d.Name) {
			pp.FailedChecks = append(pp.FailedChecks, f.Check)
			blocking = append(blocking, f)
		}
	}
	if len(blocking) > 0 {
		pp.Usable = false
		pp.UnusableWhy = blocking[0].Name + ": " + firstNonEmpty(blocking[0].Cause, blocking[0].Evidence)
	} else if p.State.Code != StateActive {
		pp.Usable = false
		pp.UnusableWhy = "port not ACTIVE (" + stateText(p) + ")"
	}
	return pp
}

// portNetdev is the netdev a RoCE port's traffic leaves through: the chosen
// GID's, or the port's own when nothing could be chosen.
func (h *Host) portNetdev(r portRef, sel Selection, selErr error) string {
	if selErr == nil && sel.GID.Netdev != "" {
		return sel.GID.Netdev
	}
	return r.port.primaryNetdev()
}

func checksOf(fs []finding) []probe.Check {
	out := make([]probe.Check, len(fs))
	for i, f := range fs {
		out[i] = f.Check
	}
	return out
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
