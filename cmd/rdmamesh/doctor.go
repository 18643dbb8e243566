package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/internal/inventory"
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
}

func newDoctorCmd() *cobra.Command {
	var o doctorOpts
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check this host's RDMA setup: devices, ports, GID table, chosen GIDs and preflight checks",
		Long: "doctor reads sysfs like ibstat and show_gids, chooses the GID each port would test with and\n" +
			"says why, and checks what makes RDMA tests fail before they start: port state, link layer,\n" +
			"subnet manager, MTU, GID netdevs in this namespace, memlock, device nodes, kernel modules.\n\n" +
			"--sysfs-root other than / reads a captured tree (such as internal/inventory/testdata/*):\n" +
			"addresses then come from its 'addrs' file, limits and capabilities from its proc/self.\n\n" +
			"Exit codes: 0 no failing check, 1 a failing check or no RDMA device, 2 usage error.",
		Example: "  rdmamesh doctor\n" +
			"  rdmamesh doctor --device mlx5_0 --gid subnet=10.0.0.0/8\n" +
			"  rdmamesh doctor --gids --json",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("doctor takes no arguments, got %q", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return runDoctor(cmd.OutOrStdout(), o) },
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	f := cmd.Flags()
	f.StringVar(&o.root, "sysfs-root", "/", "directory standing for / (sys/, proc/, dev/ beneath it)")
	f.BoolVar(&o.json, "json", false, "print JSON instead of tables")
	f.StringVar(&o.device, "device", "", "show only this RDMA device (host-wide checks stay)")
	f.StringVar(&o.gid, "gid", "auto", "GID policy: auto, index=N, netdev=NAME, subnet=CIDR or version=v1|v2")
	f.BoolVar(&o.gidsOnly, "gids", false, "print only the GID table, like show_gids")
	return cmd
}

func runDoctor(out io.Writer, o doctorOpts) error {
	pol, err := inventory.ParseGIDPolicy(o.gid)
	if err != nil {
		return usageError(err)
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
	rep, err := inventory.Diagnose(h, pol, o.device)
	var unknown *inventory.UnknownDeviceError
	if errors.As(err, &unknown) {
		return usageError(err)
	}
	if err != nil {
		return err
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
