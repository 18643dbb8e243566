package inventory

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// ReportVersion is bumped on incompatible changes to doctor's JSON.
const ReportVersion = 1

// Report is what `rdmamesh doctor` prints, as text or JSON.
type Report struct {
	Version   int           `json:"version"`
	GIDPolicy string        `json:"gid_policy"`
	Device    string        `json:"device,omitempty"` // --device filter
	Message   string        `json:"message,omitempty"`
	Hints     []string      `json:"hints,omitempty"`
	Devices   []Device      `json:"devices"`
	Netdevs   []Netdev      `json:"netdevs"`
	Ports     []probe.Port  `json:"ports"`
	Checks    []probe.Check `json:"checks"`
	Summary   Summary       `json:"summary"`
	ExitCode  int           `json:"exit_code"`

	// NeighborSource says where the ports' neighbours came from; empty
	// when they were not looked up.
	NeighborSource string `json:"neighbor_source,omitempty"`

	gids []GIDRow
}

// Summary counts checks by status.
type Summary struct {
	OK   int `json:"ok"`
	Warn int `json:"warn"`
	Fail int `json:"fail"`
}

// UnknownDeviceError is a --device naming no device; doctor treats it as a
// usage error.
type UnknownDeviceError struct {
	Name string
	Have []string
}

func (e *UnknownDeviceError) Error() string {
	return fmt.Sprintf("no RDMA device %q (have: %s)", e.Name, orDefault(strings.Join(e.Have, ", "), "none"))
}

// NoDevicesMessage is doctor's plain answer on a machine without RDMA.
const NoDevicesMessage = "no RDMA devices found"

// Diagnose judges a scanned host under a GID policy; device, when not
// empty, narrows the output to one device (host-wide checks stay).
func Diagnose(h *Host, pol GIDPolicy, device string) (*Report, error) {
	r := &Report{Version: ReportVersion, GIDPolicy: pol.String(), Device: device,
		Devices: []Device{}, Netdevs: h.Netdevs, Ports: []probe.Port{}, Checks: []probe.Check{}}
	if r.Netdevs == nil {
		r.Netdevs = []Netdev{}
	}
	if len(h.Devices) == 0 {
		r.Message = NoDevicesMessage
		r.Hints = h.noRDMAHints()
		r.ExitCode = 1
		return r, nil
	}
	if device != "" {
		if _, ok := h.Device(device); !ok {
			e := &UnknownDeviceError{Name: device}
			for _, d := range h.Devices {
				e.Have = append(e.Have, d.Name)
			}
			return nil, e
		}
	}
	keep := func(dev string) bool { return device == "" || dev == "" || dev == device }
	if h.neighbors != nil {
		r.NeighborSource = h.neighbors.About
	}
	if h.ibNeighbors != nil {
		r.NeighborSource = strings.TrimPrefix(r.NeighborSource+"; InfiniBand ports from ibnetdiscover's output", "; ")
	}
	ev := h.evaluate(pol)
	for _, f := range ev.host {
		if keep(f.dev) {
			r.Checks = append(r.Checks, f.Check)
		}
	}
	for _, pe := range ev.ports {
		if !keep(pe.ref.dev.Name) {
			continue
		}
		r.Ports = append(r.Ports, pe.probePort(ev.host))
		r.Checks = append(r.Checks, checksOf(pe.findings)...)
	}
	for _, d := range h.Devices {
		if keep(d.Name) {
			r.Devices = append(r.Devices, d)
		}
	}
	for _, g := range h.GIDTable() {
		if keep(g.Device) {
			r.gids = append(r.gids, g)
		}
	}
	for _, c := range r.Checks {
		switch c.Status {
		case StatusOK:
			r.Summary.OK++
		case StatusWarn:
			r.Summary.Warn++
		default:
			r.Summary.Fail++
		}
	}
	if r.Summary.Fail > 0 {
		r.ExitCode = 1
	}
	return r, nil
}

// AddCheck adds a finding made outside the inventory (doctor's trace
// check) to the report's checks, summary and exit code.
func (r *Report) AddCheck(c probe.Check) {
	r.Checks = append(r.Checks, c)
	switch c.Status {
	case StatusOK:
		r.Summary.OK++
	case StatusWarn:
		r.Summary.Warn++
	default:
		r.Summary.Fail++
		r.ExitCode = 1
	}
}

// driverPairs maps NIC drivers to the RDMA drivers that sit on them: a
// loaded NIC driver without its RDMA half is the commonest "no devices".
var driverPairs = []struct{ nic, rdma, hw string }{
	{"mlx5_core", "mlx5_ib", "NVIDIA ConnectX-4 and later"},
	{"mlx4_core", "mlx4_ib", "ConnectX-3"},
	{"bnxt_en", "bnxt_re", "Broadcom NetXtreme-E"},
	{"ice", "irdma", "Intel E810"},
	{"qede", "qedr", "Marvell FastLinQ"},
}

func (h *Host) noRDMAHints() []string {
	hints := []string{
		"install the RDMA user space: rdma-core and ibverbs-providers (Debian/Ubuntu: apt-get install rdma-core ibverbs-providers ibverbs-utils; RHEL/Fedora: dnf install rdma-core libibverbs-utils)",
	}
	var loaded []string
	for _, p := range driverPairs {
		if h.env.modules[p.nic] && !h.env.modules[p.rdma] {
			loaded = append(loaded, fmt.Sprintf("%s (%s) is loaded but %s is not: modprobe %s", p.nic, p.hw, p.rdma, p.rdma))
		}
	}
	if len(loaded) > 0 {
		hints = append(hints, loaded...)
	} else {
		hints = append(hints, "load the HCA's RDMA driver: modprobe mlx5_ib (ConnectX-4 and later), mlx4_ib (ConnectX-3), bnxt_re (Broadcom), irdma (Intel E810) or qedr (Marvell)")
	}
	nd := "<netdev>"
	for _, n := range h.Netdevs {
		if n.Name != "lo" && n.OperState == "up" {
			nd = n.Name
			break
		}
	}
	hints = append(hints, "no RDMA hardware? Soft-RoCE runs over any Ethernet netdev: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev "+nd)
	if h.env.netnsErr == nil && h.env.netnsMode == "exclusive" {
		hints = append(hints, "rdma netns mode is exclusive: a container sees only devices moved into its namespace (rdma dev set <dev> netns <ns>, or the RDMA CNI)")
	}
	return append(hints, "then check: ls /sys/class/infiniband; ibv_devices")
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteText writes the human report; color adds ANSI colour to statuses and
// is for terminals only.
func (r *Report) WriteText(w io.Writer, color bool) error {
	ew := &errWriter{w: w}
	if r.Message != "" {
		fmt.Fprintf(ew, "%s (nothing under /%s)\n\nTo use RDMA on this machine:\n", r.Message, sysIB)
		for _, h := range r.Hints {
			fmt.Fprintf(ew, "  - %s\n", h)
		}
		fmt.Fprintf(ew, "\nRESULT: %s (exit %d)\n", r.Message, r.ExitCode)
		return ew.err
	}
	nports := len(r.Ports)
	fmt.Fprintf(ew, "rdmamesh doctor: %s, %s, GID policy %s\n", plural(len(r.Devices), "device"), plural(nports, "port"), r.GIDPolicy)
	r.writeDevices(ew)
	fmt.Fprintln(ew, "\nGID TABLE")
	writeGIDRows(ew, r.gids)
	r.writeSelection(ew)
	r.writeNeighbors(ew)
	r.writeCounters(ew)
	r.writeChecks(ew, color)
	return ew.err
}

func (r *Report) writeDevices(w io.Writer) {
	fmt.Fprintln(w, "\nDEVICES")
	t := newTable(w)
	t.row("DEVICE", "PORT", "STATE", "PHYS", "LINK", "RATE", "LID", "SM_LID", "NETDEV", "PCI", "NUMA", "FW", "TYPE")
	for _, d := range r.Devices {
		for _, p := range d.Ports {
			lid, sm := "-", "-"
			if p.LinkLayer == LayerIB {
				lid, sm = fmt.Sprintf("0x%x", p.LID), fmt.Sprintf("0x%x", p.SMLID)
			}
			numa := "-"
			if d.NUMANode >= 0 {
				numa = strconv.Itoa(d.NUMANode)
			}
			t.row(d.Name, strconv.Itoa(p.Num), p.State.Name, p.PhysState.Name, p.LinkLayer, p.Rate.String(), lid, sm,
				dash(p.primaryNetdev()), dash(d.PCI), numa, dash(d.FWVer), dash(d.HCAType))
		}
	}
	t.flush()
}

func (r *Report) writeSelection(w io.Writer) {
	fmt.Fprintf(w, "\nGID SELECTION (policy %s)\n", r.GIDPolicy)
	t := newTable(w)
	t.row("RAIL", "PORT", "INDEX", "GID", "TYPE", "NETDEV", "IP", "MTU", "USABLE")
	for _, p := range r.Ports {
		idx, mtu, usable := "-", "-", "yes"
		if p.GIDIndex >= 0 {
			idx = strconv.Itoa(p.GIDIndex)
		}
		if p.MTU > 0 {
			mtu = strconv.Itoa(p.MTU)
		}
		if !p.Usable {
			usable = "no"
		}
		t.row(strconv.Itoa(p.Rail), portLabel(p), idx, dash(p.GID), dash(p.GIDType), dash(p.Netdev), dash(p.IP), mtu, usable)
	}
	t.flush()
	for _, p := range r.Ports {
		fmt.Fprintf(w, "  %s: %s\n", portLabel(p), p.GIDReason)
		if !p.Usable {
			fmt.Fprintf(w, "  %s: unusable: %s\n", portLabel(p), p.UnusableWhy)
		}
	}
}

// writeCounters lists the error and congestion counters that are not zero.
// They are cumulative, so they are shown, not judged: a sweep judges what
// changed while it ran.
func (r *Report) writeCounters(w io.Writer) {
	var rows [][]string
	for _, d := range r.Devices {
		for _, p := range d.Ports {
			for _, c := range p.Counters {
				rows = append(rows, []string{fmt.Sprintf("%s/%d", d.Name, p.Num), c.Dir + "/" + c.Name,
					strconv.FormatUint(c.N, 10), c.Kind.String(), c.Side.String()})
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nCOUNTERS (non-zero, cumulative since the driver loaded; a sweep judges what changes while it runs)")
	t := newTable(w)
	t.row("PORT", "COUNTER", "VALUE", "EVIDENCE OF", "SIDE")
	for _, r := range rows {
		t.row(r...)
	}
	t.flush()
}

func (r *Report) writeChecks(w io.Writer, color bool) {
	fmt.Fprintln(w, "\nCHECKS")
	t := newTable(w)
	t.row("STATUS", "CHECK", "EVIDENCE")
	for _, c := range r.Checks {
		t.row(paint(c.Status, color), c.Name, c.Evidence)
	}
	t.flush()
	problems := slices.DeleteFunc(slices.Clone(r.Checks), func(c probe.Check) bool { return c.Status == StatusOK })
	if len(problems) > 0 {
		fmt.Fprintln(w, "\nPROBLEMS")
		for _, c := range problems {
			fmt.Fprintf(w, "%s %s\n", strings.TrimSpace(paint(c.Status, color)), c.Name)
			if c.Cause != "" {
				fmt.Fprintf(w, "  cause: %s\n", c.Cause)
			}
			if c.Fix != "" {
				fmt.Fprintf(w, "  fix:   %s\n", c.Fix)
			}
		}
	}
	fmt.Fprintf(w, "\nRESULT: %d ok, %d warn, %d fail (exit %d)\n", r.Summary.OK, r.Summary.Warn, r.Summary.Fail, r.ExitCode)
}

// paint pads before colouring so every status cell carries the same number
// of escape bytes and tabwriter's columns still line up.
func paint(status string, color bool) string {
	s := fmt.Sprintf("%-4s", status)
	if !color {
		return s
	}
	code := "32"
	switch status {
	case StatusWarn:
		code = "33"
	case StatusFail:
		code = "31"
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func dash(s string) string { return orDefault(s, "-") }

// errWriter keeps the first write error so the renderers can stay linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, nil
}
