package inventory

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Check statuses.
const (
	StatusOK   = "ok"
	StatusWarn = "warn"
	StatusFail = "fail"
)

// finding is a check plus what it is about and whether, failing, it leaves
// the ports it covers untestable.
type finding struct {
	probe.Check
	dev    string // "" for host-wide findings
	port   int    // 0 for device- or host-wide findings
	blocks bool
}

// checkName joins a check's kind and its subject as "kind:subject", so the
// name stays unique per port and machine-splittable.
func checkName(kind, subject string) string {
	if subject == "" {
		return kind
	}
	return kind + ":" + subject
}

// memlockPerPort is the pinned memory one test session per rail needs:
// latency and bandwidth buffers plus QP and CQ rings, with headroom.
const memlockPerPort = 4 << 20

func (h *Host) hostFindings() []finding {
	var out []finding
	add := func(f finding) { out = append(out, f) }
	add(h.devicesFinding())
	if f, ok := h.linkLayersFinding(); ok {
		add(f)
	}
	out = append(out, h.moduleFindings()...)
	for i := range h.Devices {
		add(h.uverbsFinding(&h.Devices[i]))
		if f, ok := h.softNetdevFinding(&h.Devices[i]); ok {
			add(f)
		}
	}
	add(h.memlockFinding())
	add(h.capFinding())
	if f, ok := h.lldpFramesFinding(); ok {
		add(f)
	}
	add(h.netnsFinding())
	if len(h.Warnings) > 0 {
		add(finding{Check: probe.Check{Name: "sysfs", Status: StatusWarn,
			Evidence: strings.Join(h.Warnings, "; "),
			Cause:    "values the scanner could not read or parse; checks that depend on them are less certain",
			Fix:      "if the driver is in-tree, report these values as a bug with the files' contents"}})
	}
	return out
}

func (h *Host) devicesFinding() finding {
	var names []string
	ports := 0
	for _, d := range h.Devices {
		names = append(names, d.Name)
		ports += len(d.Ports)
	}
	return finding{Check: probe.Check{Name: "devices", Status: StatusOK,
		Evidence: fmt.Sprintf("%s, %s: %s", plural(len(h.Devices), "device"), plural(ports, "port"), strings.Join(names, ", "))}}
}

func (h *Host) linkLayersFinding() (finding, bool) {
	byLayer := map[string][]string{}
	var stuck []portRef
	for _, r := range h.rails() {
		byLayer[r.port.LinkLayer] = append(byLayer[r.port.LinkLayer], r.name())
		if r.port.State.Code == StateDown && r.port.PhysState.Code == PhysPolling {
			stuck = append(stuck, r)
		}
	}
	if len(byLayer) == 0 {
		return finding{}, false
	}
	f := finding{Check: probe.Check{Name: "link_layers", Status: StatusOK}}
	if len(byLayer) == 1 {
		for layer, ports := range byLayer {
			f.Evidence = fmt.Sprintf("%s, all %s", plural(len(ports), "port"), layer)
		}
		return f, true
	}
	f.Evidence = fmt.Sprintf("InfiniBand: %s; Ethernet: %s",
		strings.Join(byLayer[LayerIB], ", "), strings.Join(byLayer[LayerEth], ", "))
	stuckLayers := map[string]bool{}
	for _, r := range stuck {
		stuckLayers[r.port.LinkLayer] = true
	}
	if len(stuckLayers) == 2 {
		// Both kinds down and polling: the signature of VPI ports set to a
		// link type their peers do not run (the link never trains, so both
		// ends show PORT_DOWN).
		var ev, fixes []string
		for _, r := range stuck {
			ev = append(ev, fmt.Sprintf("%s %s DOWN (Polling)", r.name(), r.port.LinkLayer))
			other := LayerEth
			if r.port.LinkLayer == LayerEth {
				other = LayerIB
			}
			fixes = append(fixes, fmt.Sprintf("to make %s %s: %s", r.name(), other, linkTypeCommand(r, other)))
		}
		f.Status = StatusFail
		f.Evidence = "mixed link layers with ports down: " + strings.Join(ev, "; ")
		f.Cause = "a port whose link type (InfiniBand or Ethernet) differs from its peer's never trains; both ends stay PORT_DOWN"
		f.Fix = "set every port to the fabric's link type, here and on the peer, then reboot (mlxconfig applies at next boot; 1 = InfiniBand, 2 = Ethernet): " +
			strings.Join(fixes, "; ")
		return f, true
	}
	f.Status = StatusWarn
	f.Cause = "ports run different link layers (a VPI card in mixed mode or separate IB and Ethernet HCAs); rails of one layer cannot test the other"
	f.Fix = "nothing if intended; keep the same rail order on every node so rail i pairs with rail i"
	return f, true
}

// linkTypeCommand spells the mlxconfig call that switches one port. mlx5
// exposes each port as its own PCI function (.0 is P1, .1 is P2); mlx4 has
// one function with numbered ports, and can also switch at runtime.
func linkTypeCommand(r portRef, to string) string {
	val := "2"
	if to == LayerIB {
		val = "1"
	}
	target := r.dev.PCI
	if target == "" {
		target = "/dev/mst/<device>"
	}
	pn := r.port.Num
	mlx4 := strings.HasPrefix(r.dev.Name, "mlx4_")
	if !mlx4 && r.dev.PCI != "" {
		if _, fn, ok := strings.Cut(r.dev.PCI, "."); ok {
			if n, err := strconv.Atoi(fn); err == nil {
				pn = n + 1
			}
		}
	}
	cmd := fmt.Sprintf("`mlxconfig -d %s set LINK_TYPE_P%d=%s`", target, pn, val)
	if mlx4 && r.dev.PCI != "" {
		mode := "eth"
		if to == LayerIB {
			mode = "ib"
		}
		cmd += fmt.Sprintf(" (or now: `echo %s > /sys/bus/pci/devices/%s/mlx4_port%d`)", mode, r.dev.PCI, r.port.Num)
	}
	return cmd
}

func (h *Host) moduleFindings() []finding {
	if !h.env.modulesSeen {
		return nil
	}
	var out []finding
	uv := finding{Check: probe.Check{Name: checkName("kernel_module", "ib_uverbs"), Status: StatusOK}}
	switch {
	case h.env.modules["ib_uverbs"]:
		uv.Evidence = "loaded (sys/module/ib_uverbs)"
	case h.env.verbsClass:
		uv.Evidence = "built in (sys/class/infiniband_verbs present)"
	default:
		uv.Status, uv.blocks = StatusFail, true
		uv.Evidence = "sys/module/ib_uverbs and sys/class/infiniband_verbs are absent"
		uv.Cause = "user-space verbs go through ib_uverbs; without it libibverbs finds no devices"
		uv.Fix = "modprobe ib_uverbs (rdma-core loads it at boot once installed)"
	}
	out = append(out, uv)
	cm := finding{Check: probe.Check{Name: checkName("kernel_module", "rdma_ucm"), Status: StatusOK,
		Evidence: "loaded (sys/module/rdma_ucm)"}}
	if !h.env.modules["rdma_ucm"] {
		cm.Status = StatusWarn
		cm.Evidence = "sys/module/rdma_ucm is absent"
		cm.Cause = "tools that connect through rdma_cm (rping, ucmatose, perftest -R) need it; rdmamesh exchanges QP info itself and does not"
		cm.Fix = "modprobe rdma_ucm"
	}
	return append(out, cm)
}

func (h *Host) uverbsFinding(d *Device) finding {
	f := finding{Check: probe.Check{Name: checkName("uverbs", d.Name), Status: StatusFail}, dev: d.Name, blocks: true}
	node := devIB + "/" + d.Uverbs
	switch {
	case d.Uverbs == "" && !h.env.verbsClass:
		f.Evidence = "sys/class/infiniband_verbs is absent"
		f.Cause = "ib_uverbs is not loaded, so " + d.Name + " has no user-space device"
		f.Fix = "modprobe ib_uverbs"
	case d.Uverbs == "":
		f.Evidence = d.Name + " has no entry in sys/class/infiniband_verbs"
		f.Cause = "the device is not exposed to user space (its driver did not register verbs, or it lives in another network namespace)"
		f.Fix = "check dmesg for the driver; with rdma netns exclusive, move it here: rdma dev set " + d.Name + " netns <ns>"
	case !h.env.devIBSeen:
		f.Evidence = devIB + " is absent"
		f.Cause = "no RDMA device nodes in this mount namespace (a container started without /dev/infiniband)"
		f.Fix = "pass the devices in (docker --device=/dev/infiniband/" + d.Uverbs + ", or an RDMA device-plugin resource in Kubernetes); on a host check udev and ib_uverbs"
	case !h.env.devIB[d.Uverbs]:
		f.Evidence = fmt.Sprintf("%s missing (%s is %s in sysfs)", node, d.Name, d.Uverbs)
		f.Cause = "this container got device nodes for other HCAs only; libibverbs warns \"couldn't stat\" and skips " + d.Name
		f.Fix = "request the RDMA resource that covers " + d.Name + " from the device plugin, or pass --device=/dev/infiniband/" + d.Uverbs
	default:
		if h.env.access != nil {
			if err := h.env.access(node); err != nil {
				f.Evidence = fmt.Sprintf("%s: %v", node, err)
				f.Cause = "this user may not open the verbs device"
				f.Fix = "run as root, or grant access with a udev rule (KERNEL==\"uverbs*\", MODE=\"0666\", as rdma-core ships) or the rdma group"
				return f
			}
		}
		f.Status, f.blocks = StatusOK, false
		f.Evidence = node
	}
	return f
}

func (h *Host) memlockFinding() finding {
	f := finding{Check: probe.Check{Name: "memlock", Status: StatusOK}}
	ml := h.env.memlock
	fix := "ulimit -l unlimited (systemd: LimitMEMLOCK=infinity; limits.conf: `* - memlock unlimited`; containers: add capability IPC_LOCK)"
	ports := max(len(h.rails()), 1)
	need := uint64(ports) * memlockPerPort
	switch {
	case h.env.memlockErr != nil:
		f.Status = StatusWarn
		f.Evidence = "RLIMIT_MEMLOCK unreadable: " + h.env.memlockErr.Error()
		f.Cause = "cannot tell whether buffer registration will fit"
		f.Fix = fix
	case ml.Soft == Unlimited:
		f.Evidence = "RLIMIT_MEMLOCK unlimited"
	case h.hasIPCLock():
		f.Evidence = fmt.Sprintf("RLIMIT_MEMLOCK %s, lifted by CAP_IPC_LOCK", humanBytes(ml.Soft))
	case ml.Soft < need:
		f.Status, f.blocks = StatusFail, true
		f.Evidence = fmt.Sprintf("RLIMIT_MEMLOCK %s < %s needed for %s", humanBytes(ml.Soft), humanBytes(need), plural(ports, "port"))
		f.Cause = "registered buffers and QP rings are pinned; past the limit ibv_reg_mr fails with ENOMEM"
		f.Fix = fix
	default:
		f.Status = StatusWarn
		f.Evidence = fmt.Sprintf("RLIMIT_MEMLOCK %s: enough for rdmamesh on %s", humanBytes(ml.Soft), plural(ports, "port"))
		f.Cause = "jobs that pin GiBs (NCCL, MPI) will hit ENOMEM at ibv_reg_mr on this node"
		f.Fix = fix
	}
	return f
}

func (h *Host) hasIPCLock() bool {
	return h.env.capErr == nil && h.env.capEff&(1<<capIPCLock) != 0
}

func (h *Host) capFinding() finding {
	f := finding{Check: probe.Check{Name: "cap_ipc_lock", Status: StatusOK}}
	switch {
	case h.env.capErr != nil:
		f.Status = StatusWarn
		f.Evidence = "proc/self/status unreadable: " + h.env.capErr.Error()
		f.Cause = "cannot tell whether RLIMIT_MEMLOCK applies"
		f.Fix = "run doctor where /proc is mounted"
	case h.hasIPCLock():
		f.Evidence = fmt.Sprintf("CapEff %016x includes CAP_IPC_LOCK", h.env.capEff)
	case h.env.memlockErr == nil && h.env.memlock.Soft == Unlimited:
		f.Evidence = "absent, not needed: RLIMIT_MEMLOCK unlimited"
	default:
		f.Status = StatusWarn
		f.Evidence = fmt.Sprintf("CapEff %016x lacks CAP_IPC_LOCK", h.env.capEff)
		f.Cause = "without IPC_LOCK, pinned memory is capped by RLIMIT_MEMLOCK"
		f.Fix = "run as root, or add the capability (Kubernetes securityContext.capabilities.add: [IPC_LOCK]; docker --cap-add IPC_LOCK)"
	}
	return f
}

func (h *Host) netnsFinding() finding {
	f := finding{Check: probe.Check{Name: "rdma_netns", Status: StatusOK}}
	switch {
	case h.env.netnsErr != nil:
		f.Status = StatusWarn
		f.Evidence = "unknown: " + h.env.netnsErr.Error()
		f.Cause = "cannot tell whether this namespace sees every RDMA device (shared) or only its own (exclusive)"
		f.Fix = "check with `rdma system`"
	case h.env.netnsMode == "exclusive":
		f.Evidence = "exclusive: this namespace sees only the RDMA devices moved into it (rdma dev set <dev> netns <ns>)"
	default:
		f.Evidence = h.env.netnsMode + ": every network namespace sees every RDMA device, but only its own netdevs"
	}
	return f
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok {
		return fmt.Sprintf("%d %sies", n, stem)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func humanBytes(n uint64) string {
	switch {
	case n == Unlimited:
		return "unlimited"
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// softNetdevFinding: a software RDMA device (rxe, siw) is bound to a netdev
// by hand, `rdma link add rxe0 type rxe netdev eth0`, and on the wrong one
// its GID sits on a network its peers are not on: every test fails as a
// broken path would. The netdev with the default route is the management
// network on nearly every cluster; an RDMA device there while another up
// netdev with an address has none is the likely slip. Hardware devices own
// their netdev and are not judged.
func (h *Host) softNetdevFinding(d *Device) (finding, bool) {
	if d.PCI != "" || len(d.Ports) == 0 || h.env.defaultRoute == "" {
		return finding{}, false
	}
	bound := d.Ports[0].primaryNetdev()
	if bound == "" {
		return finding{}, false
	}
	f := finding{Check: probe.Check{Name: checkName("rdma-netdev", d.Name), Status: StatusOK,
		Evidence: fmt.Sprintf("%s is bound to %s", d.Name, bound)}, dev: d.Name}
	if bound != h.env.defaultRoute {
		return f, true
	}
	var free []string
	for _, n := range h.Netdevs {
		if n.Name == bound || n.Name == "lo" || !n.Up() || h.hasRDMA(n.Name) {
			continue
		}
		for _, a := range n.Addrs {
			if a.Addr().Is4() && !a.Addr().IsLoopback() && !a.Addr().IsLinkLocalUnicast() {
				free = append(free, fmt.Sprintf("%s (%s)", n.Name, a))
				break
			}
		}
	}
	if len(free) == 0 {
		return f, true
	}
	f.Status = StatusWarn
	f.Evidence = fmt.Sprintf("%s is bound to %s, which carries the default route, while %s has an address and no RDMA device",
		d.Name, bound, strings.Join(free, ", "))
	f.Cause = "a software RDMA device on the management network: its GID is on a network the other nodes' RDMA devices are likely not on, and every test to them fails as a broken path would"
	f.Fix = fmt.Sprintf("if %s is the data network, rebind: `rdma link delete %s; rdma link add %s type %s netdev %s`",
		strings.Fields(free[0])[0], d.Name, d.Name, softKind(d.Name), strings.Fields(free[0])[0])
	return f, true
}

// hasRDMA says whether an RDMA device's GID names netdev.
func (h *Host) hasRDMA(netdev string) bool {
	for _, d := range h.Devices {
		for _, p := range d.Ports {
			for _, g := range p.GIDs {
				if g.Netdev == netdev {
					return true
				}
			}
		}
	}
	return false
}

func softKind(dev string) string {
	if strings.HasPrefix(dev, "siw") {
		return "siw"
	}
	return "rxe"
}
