package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/internal/inventory"
	"github.com/rdmamesh/rdmamesh/internal/pathtrace"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// doctorExit carries doctor's exit code to main (which honours any error
// with an ExitCode method): 1 a failing check or no RDMA, 2 bad usage.
// Named apart from probe.go's exitError so both files build together.
type doctorExit struct {
	code int
	err  error
}

func (e *doctorExit) Error() string { return e.err.Error() }
func (e *doctorExit) Unwrap() error { return e.err }
func (e *doctorExit) ExitCode() int { return e.code }

func usageError(err error) error { return &doctorExit{code: 2, err: err} }

type doctorOpts struct {
	root, device, gid string
	json, gidsOnly    bool
	lldpWait          time.Duration
	lldpSource        string
	ibnetdiscover     string
}

func newDoctorCmd() *cobra.Command {
	var o doctorOpts
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check this host's RDMA setup: devices, ports, GID table, chosen GIDs and preflight checks",
		Long: "doctor reads sysfs like ibstat and show_gids, chooses the GID each port would test with and\n" +
			"says why, and checks what makes RDMA tests fail before they start: port state, link layer,\n" +
			"subnet manager, MTU, GID netdevs in this namespace, memlock, device nodes, kernel modules.\n\n" +
			"Each Ethernet port's switch neighbour comes from LLDP: lldpd's table when lldpd runs, else the\n" +
			"LLDP frames arriving on the port's netdev (root or CAP_NET_RAW), waited for up to --lldp-wait,\n" +
			"as switches announce about every 30 s. A port that heard nothing says so and why. An InfiniBand\n" +
			"port's neighbour is in the subnet's view: --ibnetdiscover FILE (ibnetdiscover's output) finds\n" +
			"it by the device's node GUID.\n\n" +
			"--sysfs-root other than / reads a captured tree (such as internal/inventory/testdata/*):\n" +
			"addresses then come from its 'addrs' file, limits and capabilities from its proc/self,\n" +
			"neighbours from its lldpcli.json (lldpcli -f json0 show neighbors).\n\n" +
			"Exit codes: 0 no failing check, 1 a failing check or no RDMA device, 2 usage error.",
		Example: "  rdmamesh doctor\n" +
			"  rdmamesh doctor --device mlx5_0 --gid subnet=10.0.0.0/8\n" +
			"  rdmamesh doctor --gids --json\n" +
			"  rdmamesh doctor --lldp-source frames --lldp-wait 65s\n" +
			"  ibnetdiscover > fabric.txt; rdmamesh doctor --ibnetdiscover fabric.txt",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("doctor takes no arguments, got %q", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	f := cmd.Flags()
	f.StringVar(&o.root, "sysfs-root", "/", "directory standing for / (sys/, proc/, dev/ beneath it)")
	f.BoolVar(&o.json, "json", false, "print JSON instead of tables")
	f.StringVar(&o.device, "device", "", "show only this RDMA device (host-wide checks stay)")
	f.StringVar(&o.gid, "gid", "auto", "GID policy: auto, index=N, netdev=NAME, subnet=CIDR or version=v1|v2")
	f.BoolVar(&o.gidsOnly, "gids", false, "print only the GID table, like show_gids")
	f.DurationVar(&o.lldpWait, "lldp-wait", inventory.DoctorLLDPWait, "how long to wait for LLDP frames on ports that heard none; 0 looks up no neighbours")
	f.StringVar(&o.lldpSource, "lldp-source", inventory.NeighborsAuto, "where switch neighbours come from: auto (lldpd if it runs, else frames), lldpd or frames")
	f.StringVar(&o.ibnetdiscover, "ibnetdiscover", "", "ibnetdiscover's output: the InfiniBand ports' switch neighbours, found by node GUID")
	return cmd
}

func runDoctor(ctx context.Context, out, errOut io.Writer, o doctorOpts) error {
	pol, err := inventory.ParseGIDPolicy(o.gid)
	if err != nil {
		return usageError(err)
	}
	if ctx == nil { // cobra's Execute, unlike ExecuteContext, leaves it nil
		ctx = context.Background()
	}
	fsys, opts, err := doctorRoot(o.root)
	if err != nil {
		return usageError(err)
	}
	opts.Counters = true
	h, err := inventory.Scan(fsys, opts)
	if err != nil {
		return usageError(fmt.Errorf("scan %s: %w", o.root, err))
	}
	var ib inventory.IBNeighborLookup
	if o.ibnetdiscover != "" { // read before any LLDP wait: a bad file is a usage error at once
		if ib, err = ibNeighbors(o.ibnetdiscover); err != nil {
			return usageError(err)
		}
	}
	lookup, stop, err := doctorNeighbors(ctx, errOut, fsys, o)
	if err != nil {
		return usageError(err)
	}
	defer stop()
	// An unknown --device is Diagnose's usage error: not worth an LLDP wait first.
	if _, known := h.Device(o.device); lookup != nil && (o.device == "" || known) {
		h.LookupNeighbors(o.device, lookup)
	}
	if ib != nil {
		h.LookupIBNeighbors(ib)
	}
	rep, err := inventory.Diagnose(h, pol, o.device)
	var unknown *inventory.UnknownDeviceError
	if errors.As(err, &unknown) {
		return usageError(err)
	}
	if err != nil {
		return err
	}
	if filepath.Clean(o.root) == string(filepath.Separator) && !o.gidsOnly {
		traceChecks(ctx, rep)
	}
	if o.gidsOnly {
		err = writeGIDs(out, h, rep, o)
	} else if o.json {
		err = rep.WriteJSON(out)
	} else {
		err = rep.WriteText(out, colorOK(out))
	}
	if err != nil {
		return err
	}
	switch {
	case rep.Message != "":
		return &doctorExit{code: rep.ExitCode, err: errors.New(rep.Message)}
	case rep.ExitCode != 0 && !o.gidsOnly:
		return &doctorExit{code: rep.ExitCode, err: fmt.Errorf("doctor: %d failing checks", rep.Summary.Fail)}
	}
	return nil
}

// doctorNeighbors is where the ports' neighbours come from: a captured
// tree's lldpcli.json, or this host's lldpd or LLDP frames; nil when they
// are not wanted (--lldp-wait 0, or --gids, which prints no ports). stop
// ends the frame listeners.
func doctorNeighbors(ctx context.Context, errOut io.Writer, fsys fs.FS, o doctorOpts) (inventory.NeighborLookup, func(), error) {
	none := func() {}
	if err := inventory.CheckNeighborSource(o.lldpSource); err != nil {
		return nil, none, fmt.Errorf("--lldp-source: %w", err)
	}
	if o.lldpWait < 0 {
		return nil, none, fmt.Errorf("--lldp-wait %s: want 0 (no neighbours) or a wait such as 35s", o.lldpWait)
	}
	if o.lldpWait == 0 || o.gidsOnly {
		return nil, none, nil
	}
	if filepath.Clean(o.root) != string(filepath.Separator) {
		lookup, err := inventory.FixtureNeighbors(fsys)
		if err != nil {
			return nil, none, fmt.Errorf("--sysfs-root %s: %w", o.root, err)
		}
		return lookup, none, nil
	}
	nc, err := inventory.NewNeighborCollector(ctx, inventory.NeighborOptions{Source: o.lldpSource, Wait: o.lldpWait,
		OnWait: func(netdevs []string, wait time.Duration) {
			fmt.Fprintf(errOut, "doctor: listening for LLDP on %s for up to %s (switches announce about every 30 s; --lldp-wait 0 skips)\n",
				strings.Join(netdevs, ", "), wait)
		}})
	if err != nil {
		return nil, none, fmt.Errorf("--lldp-source: %w", err)
	}
	return nc.Lookup, nc.Close, nil
}

func writeGIDs(out io.Writer, h *inventory.Host, rep *inventory.Report, o doctorOpts) error {
	if rep.Message != "" {
		return rep.WriteText(out, false)
	}
	if o.device != "" {
		one := *h
		d, _ := h.Device(o.device)
		one.Devices = []inventory.Device{*d}
		h = &one
	}
	if o.json {
		return h.WriteGIDTableJSON(out)
	}
	return h.WriteGIDTable(out)
}

// doctorRoot opens the tree to scan. The real root asks the kernel for what
// files cannot show (addresses, rlimits, netlink); any other root is a
// captured tree and answers from its own files, so its output is the same
// on every machine.
func doctorRoot(dir string) (fs.FS, inventory.Options, error) {
	dir = filepath.Clean(dir)
	st, err := os.Stat(dir)
	if err != nil {
		return nil, inventory.Options{}, fmt.Errorf("--sysfs-root: %w", err)
	}
	if !st.IsDir() {
		return nil, inventory.Options{}, fmt.Errorf("--sysfs-root %s: not a directory", dir)
	}
	fsys := os.DirFS(dir)
	if dir == string(filepath.Separator) {
		return fsys, inventory.SystemOptions(dir), nil
	}
	opts, err := inventory.FixtureOptions(fsys)
	if err != nil {
		return nil, inventory.Options{}, fmt.Errorf("--sysfs-root %s: %w", dir, err)
	}
	return fsys, opts, nil
}

// colorOK is true only for a terminal that has not opted out (NO_COLOR), so
// pipes, files and CI logs get plain text.
func colorOK(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// traceChecks asks, for each RoCE v2 port with an IP GID, whether this
// namespace can trace that GID's flows (pathtrace.Check: a probe to one of
// its own closed ports must get its ICMP answer back through the UDP
// socket's error queue, as every hop's does). A warning, not a failure:
// tests run without traces; the path a suspect cell took stays unknown.
func traceChecks(ctx context.Context, rep *inventory.Report) {
	for _, p := range rep.Ports {
		ip, err := netip.ParseAddr(p.IP)
		if p.GIDType != "RoCE v2" || err != nil {
			continue
		}
		name := fmt.Sprintf("trace:%s/%d", p.Device, p.Port)
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = pathtrace.Check(cctx, ip)
		cancel()
		if err != nil {
			rep.AddCheck(probe.Check{Name: name, Status: inventory.StatusWarn, Evidence: err.Error(),
				Cause: "flows from this GID cannot be traced: a suspect cell's path (rdmamesh trace, POST /api/v1/sweeps/ID/trace) stays unknown",
				Fix:   "allow ICMP time-exceeded and port-unreachable back to this host (nft/iptables INPUT); no capability is needed"})
			continue
		}
		rep.AddCheck(probe.Check{Name: name, Status: inventory.StatusOK,
			Evidence: fmt.Sprintf("a probe from %s got its ICMP answer back through the socket's error queue: flows can be traced, unprivileged", ip)})
	}
}
