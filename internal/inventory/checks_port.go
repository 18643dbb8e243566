package inventory

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// portFindings judges one port, given the GID selection made for it.
func (h *Host) portFindings(r portRef, sel Selection, selErr error) []finding {
	subject := r.name()
	mk := func(kind string) finding {
		return finding{Check: probe.Check{Name: checkName(kind, subject), Status: StatusOK},
			dev: r.dev.Name, port: r.port.Num}
	}
	out := []finding{h.portStateFinding(r, mk("port_state"))}
	if r.port.LinkLayer == LayerIB && r.port.PhysState.Code == PhysLinkUp {
		out = append(out, smFinding(r, mk("subnet_manager")))
	}
	out = append(out, h.rateFinding(r, mk("rate")), gidFinding(sel, selErr, mk("gid")))
	if r.port.LinkLayer == LayerEth {
		if f, ok := h.gidNetdevsFinding(r, mk("gid_netdevs")); ok {
			out = append(out, f)
		}
		if f, ok := h.mtuFinding(r, sel, selErr, mk("mtu")); ok {
			out = append(out, f)
		}
		if r.port.RoCEDefaultMode != "" && selErr == nil {
			out = append(out, roceModeFinding(r, sel, mk("roce_default_mode")))
		}
	}
	return out
}

func stateText(p *Port) string {
	return fmt.Sprintf("state %s, phys_state %s", p.State, p.PhysState)
}

func (h *Host) portStateFinding(r portRef, f finding) finding {
	p := r.port
	f.Evidence = stateText(p)
	active := p.State.Code == StateActive
	switch {
	case active && p.PhysState.Code == PhysLinkUp:
		return f
	case active:
		f.Status = StatusWarn
		f.Cause = "the port is ACTIVE but its physical state is not LinkUp: the link is recovering or flapping"
		f.Fix = "watch `ibstat " + r.dev.Name + " " + fmt.Sprint(p.Num) + "`; check the cable with `mlxlink -d " + orDefault(r.dev.PCI, r.dev.Name) + "`"
		return f
	case p.LinkLayer == LayerIB && p.State.Code == StateInit && p.PhysState.Code == PhysLinkUp:
		f.Status = StatusWarn
		f.Cause = "the link trained but no subnet manager has brought the port to ACTIVE (see subnet_manager)"
		f.Fix = "see subnet_manager"
		return f
	}
	f.Status, f.blocks = StatusFail, true
	nd := p.primaryNetdev()
	switch p.PhysState.Code {
	case PhysPolling:
		other := LayerIB
		if p.LinkLayer == LayerIB {
			other = LayerEth
		}
		f.Cause = "no link partner: cable unplugged or faulty, the peer port down, or the peer running the other link layer (InfiniBand vs Ethernet leaves both ends PORT_DOWN)"
		f.Fix = "check the cable and the peer port (ibstat on both ends); if the peer is " + other + ", switch one side: " +
			linkTypeCommand(r, other) + ", then reboot"
	case PhysDisabled, PhysSleep:
		if p.LinkLayer == LayerEth {
			f.Cause = "the port is disabled: its netdev is administratively down"
			f.Fix = "ip link set dev " + orDefault(nd, "<netdev>") + " up"
		} else {
			f.Cause = "the port is disabled (by ibportstate or from the switch side)"
			f.Fix = fmt.Sprintf("enable the switch port facing it: `ibportstate -C %s -P %d <switch-lid> <switch-port> enable`, or from the switch's CLI", r.dev.Name, p.Num)
		}
	case PhysTraining:
		f.Cause = "link training does not finish: speed or width negotiation fails (cable, transceiver or switch port settings)"
		f.Fix = "check `mlxlink -d " + orDefault(r.dev.PCI, r.dev.Name) + "` and the switch port; try another cable"
	case PhysErrRecov:
		f.Cause = "the link is in error recovery: it is flapping"
		f.Fix = "check the cable and transceiver (`mlxlink -d " + orDefault(r.dev.PCI, r.dev.Name) + " --show_ber`)"
	case PhysLinkUp:
		f.Cause = "the physical link is up but the port is not ACTIVE"
		f.Fix = "check dmesg for driver or firmware errors; reload the driver"
	default:
		f.Cause = "the port is not ACTIVE"
		f.Fix = "check the cable, the peer and dmesg"
	}
	return f
}

func smFinding(r portRef, f finding) finding {
	p := r.port
	f.Evidence = fmt.Sprintf("state %s, lid 0x%x, sm_lid 0x%x", p.State.Name, p.LID, p.SMLID)
	if p.State.Code != StateInit && p.SMLID != 0 && p.LID != 0 {
		return f
	}
	f.Status, f.blocks = StatusFail, true
	f.Cause = "no subnet manager has configured this port: without a LID it cannot reach ACTIVE and no traffic flows (InfiniBand needs an SM even back-to-back)"
	f.Fix = "run one subnet manager on the fabric: `systemctl enable --now opensm` on one node, or enable the managed switch's SM"
	return f
}

func (h *Host) rateFinding(r portRef, f finding) finding {
	p := r.port
	if p.RateRaw == "" {
		f.Status, f.Evidence = StatusWarn, "no rate file"
		f.Cause, f.Fix = "the driver does not report a rate; bandwidth cannot be judged against it", "none needed"
		return f
	}
	if p.Rate.Gbps == 0 && p.Rate.Width == 0 {
		f.Status, f.Evidence = StatusWarn, fmt.Sprintf("unparseable rate %q", p.RateRaw)
		f.Cause, f.Fix = "the rate is not in the kernel's \"N Gb/sec (WX SPEED)\" form", "report the value as a bug"
		return f
	}
	f.Evidence = p.Rate.String()
	if p.State.Code != StateActive {
		return f
	}
	best := 0.0
	for _, o := range h.rails() {
		if o.port.State.Code == StateActive && o.port.LinkLayer == p.LinkLayer {
			best = max(best, o.port.Rate.Gbps)
		}
	}
	if p.Rate.Gbps < best {
		f.Status = StatusWarn
		f.Evidence = fmt.Sprintf("%s while other %s ports run %g Gb/s", p.Rate, p.LinkLayer, best)
		f.Cause = "the link trained below its siblings: a bad cable or transceiver, or lanes down (a narrower width)"
		f.Fix = "check `mlxlink -d " + orDefault(r.dev.PCI, r.dev.Name) + "`; reseat or replace the cable"
	}
	return f
}

func gidFinding(sel Selection, selErr error, f finding) finding {
	var se *SelectionError
	switch {
	case errors.As(selErr, &se):
		f.Status, f.blocks = StatusFail, true
		f.Evidence, f.Cause, f.Fix = se.Msg, se.Cause, se.Fix
	case selErr != nil:
		f.Status, f.blocks = StatusFail, true
		f.Evidence = selErr.Error()
	case sel.Warning != "":
		f.Status = StatusWarn
		f.Evidence, f.Cause, f.Fix = sel.Reason, sel.Warning, sel.WarnFix
	default:
		f.Evidence = sel.Reason
	}
	return f
}

func (h *Host) gidNetdevsFinding(r portRef, f finding) (finding, bool) {
	if len(r.port.GIDs) == 0 {
		return f, false
	}
	var g grouper
	foreign := 0
	owners := map[string]bool{}
	var names []string
	for _, gid := range r.port.GIDs {
		v := h.view(gid)
		if v.why != "" {
			foreign++
			g.add(v.why, gid.Index)
		} else if !owners[gid.Netdev] {
			owners[gid.Netdev] = true
			names = append(names, gid.Netdev)
		}
	}
	if foreign == 0 {
		f.Evidence = fmt.Sprintf("%s, all on %s in this namespace", plural(len(r.port.GIDs), "entry"), strings.Join(names, ", "))
		return f, true
	}
	f.Status = StatusWarn
	f.Evidence = fmt.Sprintf("%d of %d entries are not usable here: %s", foreign, len(r.port.GIDs), g.String())
	f.Cause = "this namespace sees GID entries of netdevs it does not own (a container with rdma netns shared); those indexes fail at RTR with ENODEV or never reach this process"
	f.Fix = "never hard-code those indexes (NCCL_IB_GID_INDEX, perftest -x); let rdmamesh choose or use --gid netdev=<this pod's netdev>"
	return f, true
}

func (h *Host) mtuFinding(r portRef, sel Selection, selErr error, f finding) (finding, bool) {
	nd, ok := h.Netdev(h.portNetdev(r, sel, selErr))
	if !ok || nd.MTU == 0 {
		return f, false
	}
	roce := RoCEMTU(nd.MTU)
	f.Evidence = fmt.Sprintf("%s MTU %d allows RoCE MTU %d", nd.Name, nd.MTU, roce)
	fix := fmt.Sprintf("ip link set dev %s mtu 9000 on every node and the switch ports (RoCE MTU 4096 needs a netdev MTU of at least 4192)", nd.Name)
	switch {
	case roce == 0:
		f.Status, f.blocks = StatusFail, true
		f.Evidence = fmt.Sprintf("%s MTU %d is below the smallest RoCE MTU (256 + 96 bytes of headers)", nd.Name, nd.MTU)
		f.Cause = "no RoCE packet fits"
		f.Fix = fix
	case roce < 4096:
		f.Status = StatusWarn
		f.Cause = "RoCE carries the largest IB MTU that fits the netdev MTU after 96 bytes of headers; small packets cost bandwidth and message rate"
		f.Fix = fix
	}
	return f, true
}

func roceModeFinding(r portRef, sel Selection, f finding) finding {
	p := r.port
	f.Evidence = fmt.Sprintf("rdma_cm default_roce_mode %s, chosen GID %s", p.RoCEDefaultMode, typeName(sel.GID.Type))
	if p.RoCEDefaultMode == sel.GID.Type {
		return f
	}
	f.Status = StatusWarn
	f.Cause = "tools that connect through rdma_cm (rping, ucmatose, perftest -R) use the default mode's GIDs and will not reach peers using " + typeName(sel.GID.Type)
	f.Fix = fmt.Sprintf("echo %q > /sys/kernel/config/rdma_cm/%s/ports/%d/default_roce_mode", sel.GID.Type, r.dev.Name, p.Num)
	return f
}
