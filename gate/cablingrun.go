package gate

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/rdmamesh/rdmamesh/cabling"
)

// CablingOptions of `rdmamesh cabling`: which coordinator, which sweep's
// traced paths, the files to write and what fails.
type CablingOptions struct {
	Coordinator string
	Token       string
	TLS         *tls.Config
	Client      *http.Client
	Timeout     time.Duration
	// Sweep's traced paths are evidence; "" is the newest sweep's.
	Sweep string
	// Output files; "" skips one.
	JSONFile, CSVFile, JUnitFile string
	// Switches are the switches' own neighbour tables (--switch-lldp):
	// when any are given the report is asked for with them (POST), so
	// cables between switches are judged by port.
	Switches []cabling.SwitchPort
	// Strict fails on ports without evidence too; WarnOnly prints a
	// warning and exits 0 on a mismatch.
	Strict, WarnOnly bool
}

// RunCabling asks the coordinator for its cabling report, prints the
// table, writes the files and returns the exit code: ExitHealthy when
// every port is ok (or without evidence, unless Strict), ExitUnhealthy
// on a mismatch (ExitHealthy with WarnOnly), ExitUsage and ExitInfra as
// the gate's.
func RunCabling(ctx context.Context, o CablingOptions, out, errOut io.Writer) int {
	if err := o.check(); err != nil {
		return report(errOut, err)
	}
	ctx, c, cancel := connect(ctx, o.Coordinator, o.Token, o.Client, o.TLS, o.Timeout)
	defer cancel()
	a, err := askCabling(ctx, c, o.Sweep, o.Switches)
	if err != nil {
		return report(errOut, err)
	}
	for _, f := range []output{{"--json", o.JSONFile, a.writeAnswerJSON}, {"--csv", o.CSVFile, a.WriteCSV}, {"--junit", o.JUnitFile, a.WriteJUnit}} {
		if f.path == "" {
			continue
		}
		if err := writeFile(f.path, f.write); err != nil {
			return report(errOut, infra(fmt.Errorf("%s: %w", f.flag, err)))
		}
	}
	if err := a.WriteTable(out); err != nil {
		return report(errOut, infra(err))
	}
	n := a.mismatches(o.Strict)
	switch {
	case n == 0:
		return ExitHealthy
	case o.WarnOnly:
		fmt.Fprintf(out, "warning: %d ports are not as planned (--warn-only: exit 0)\n", n)
		return ExitHealthy
	}
	return ExitUnhealthy
}

func (o CablingOptions) check() error {
	if err := checkCoordinator(o.Coordinator, o.TLS); err != nil {
		return err
	}
	if o.Strict && o.WarnOnly {
		return usage(errors.New("--strict and --warn-only contradict each other: --strict fails on ports without evidence, --warn-only never fails; give one"))
	}
	for _, f := range []output{{flag: "--json", path: o.JSONFile}, {flag: "--csv", path: o.CSVFile}, {flag: "--junit", path: o.JUnitFile}} {
		if f.path == "" {
			continue
		}
		if err := checkDir(f.path); err != nil {
			return usage(fmt.Errorf("%s: %w (give a file in a directory that exists)", f.flag, err))
		}
	}
	return nil
}
