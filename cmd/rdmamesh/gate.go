package main

import (
	"crypto/tls"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/gate"
)

func newGateCmd() *cobra.Command {
	var o gate.Options
	var tokenFile, specFile string
	var retests int
	var tlsFiles gateTLS
	cmd := &cobra.Command{
		Use:   "gate --coordinator URL",
		Short: "Run a sweep (or judge the latest, or the live window) and exit 0 healthy, 1 unhealthy, 2 usage/config, 3 infrastructure, 4 slow, 5 miscabled",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Request.Mode != "" && o.Request.Mode != "quick" && o.Request.Mode != "full" {
				return &codeError{code: gate.ExitUsage, err: errorf("--mode %q: want quick or full", o.Request.Mode)}
			}
			if specFile != "" {
				spec, err := gate.LoadSpec(specFile)
				if err != nil {
					return &codeError{code: gate.ExitUsage, err: err}
				}
				o.Request = gate.Merge(spec, o.Request)
			}
			if cmd.Flags().Changed("retests") {
				o.Request.Retests = &retests
			}
			o.TTY = isTerminal(cmd.OutOrStdout())
			var err error
			if o.Token, o.TLS, err = apiAccess(tokenFile, tlsFiles); err != nil {
				return err
			}
			code := gate.Run(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if code != 0 {
				return exitCode(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Coordinator, "coordinator", "", "coordinator base URL, e.g. http://coordinator:8080")
	f.BoolVar(&o.Latest, "latest", false, "judge the newest sweep instead of starting one")
	f.BoolVar(&o.Live, "live", false, "judge the always-on mesh's live window instead of starting a sweep (exit 3 when live probing is off or stale)")
	f.DurationVar(&o.LiveMaxAge, "live-max-age", 0, "with --live: how long ago the live window may have ended before it counts as stale (default: three live windows)")
	f.StringVar(&o.JSONFile, "json", "", "write the matrix as JSON to this file")
	f.StringVar(&o.JUnitFile, "junit", "", "write JUnit XML (one testcase per pair and rail) to this file")
	f.StringVar(&o.Request.Mode, "mode", "", "sweep mode: quick or full (default: the coordinator's)")
	f.StringVar(&specFile, "spec", "", "sweep spec file (gate.yaml: the fields of POST /api/v1/sweeps); flags override it")
	f.StringSliceVar(&o.Request.Nodes, "nodes", nil, "only these workers (default: all)")
	f.StringVar(&o.Request.Hosts, "hosts", "", "only the workers of this Slurm hostlist, e.g. gpu[001-128,130] (in a prolog: $SLURM_JOB_NODELIST)")
	f.StringToStringVar(&o.Request.Labels, "labels", nil, "only workers with these labels, e.g. rack=r1,leaf=l3")
	f.StringVar(&o.Request.Pattern, "pattern", "", "all-pairs, k-batch, one-to-all, links or fabric (default: the coordinator's)")
	f.IntVar(&o.Request.BatchSize, "batch-size", 0, "pairs per round for --pattern k-batch")
	f.StringVar(&o.Request.Root, "root", "", "the node tested against all others for --pattern one-to-all")
	f.StringVar(&o.Request.RailMode, "rail-mode", "", "same (rail i to rail i), cross (to every other rail) or all")
	f.IntSliceVar(&o.Request.Rails, "rails", nil, "only these rails, e.g. 0,1,2,3")
	f.StringVar(&o.Request.Budget, "budget", "", "time budget of the sweep on the coordinator, e.g. 5m; past it the sweep fails (exit 3)")
	f.IntVar(&retests, "retests", 0, "confirmation passes of suspect pairs (0 to 5; default: the coordinator's)")
	f.StringVar(&o.Request.Profile, "profile", "", "threshold profile loaded by the coordinator (coordinator.profiles_file)")
	f.StringVar(&o.Request.Connect, "connect", "", "exchange (QP info over the worker API) or rdmacm")
	f.StringVar(&o.BaselineFile, "save-baseline", "", "write the sweep's ok cells as a baseline file for coordinator.baseline_file")
	f.DurationVar(&o.Timeout, "timeout", 30*time.Minute, "the gate's time budget: give up (exit 3) after this long")
	f.StringVar(&tokenFile, "token-file", "", "file holding the API bearer token (default: $RDMAMESH_AUTH_TOKEN)")
	tlsFiles.addFlags(f)
	f.StringVar(&o.CSVFile, "csv", "", "write one CSV row per cell to this file")
	f.StringVar(&o.ExcludeFile, "exclude", "", "write a Slurm hostlist of nodes to exclude (empty file when none)")
	f.StringVar(&o.HostFile, "hostfile", "", "write the healthy nodes, one per line")
	f.IntVar(&o.HostSlots, "host-slots", 0, "with --hostfile: write 'node slots=N' lines")
	f.StringVar(&o.CablesFile, "cables", "", "write the cable, link and switch suspects as CSV for a technician (switch, port, peer, peer port, problem, evidence, action); needs a coordinator with a topology")
	f.StringVar(&o.NCCLEnvFile, "nccl-env", "", "write NCCL settings (NCCL_IB_HCA, NCCL_IB_GID_INDEX, ...) for the healthy nodes")
	f.StringVar(&o.NCCL.SocketIfname, "nccl-socket-ifname", "", "NCCL_SOCKET_IFNAME to put in the env file")
	f.BoolVar(&o.NCCL.EnvFile, "nccl-env-file-format", false,
		"write the NCCL settings as bare KEY=value lines (docker --env-file, systemd EnvironmentFile=) instead of export lines to source")
	f.StringVar(&o.Cabling, "cabling", gate.CablingFail, "after the sweep, a port not cabled as planned: fail (exit 5), warn (print it, exit as the sweep) or off (do not check); ports without evidence never fail")
	f.StringVar(&o.CablingCSV, "cabling-csv", "", "write the cabling findings as CSV for a technician (end, node, hca, rail, expected, found, verdict, with, evidence, action, detail)")
	f.StringVar(&o.DiffAgainst, "diff-against", "", "an earlier --json file: say what got worse or better")
	f.StringVar(&o.DiffJSONFile, "diff-json", "", "with --diff-against: write the full diff as JSON")
	return cmd
}

// apiAccess is how a client command reaches the coordinator's API: the
// token from --token-file (default $RDMAMESH_AUTH_TOKEN) and the TLS of
// its flags or the RDMAMESH_TLS_* variables (nil: none).
func apiAccess(tokenFile string, tlsFiles gateTLS) (string, *tls.Config, error) {
	token := strings.TrimSpace(os.Getenv("RDMAMESH_AUTH_TOKEN"))
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", nil, &codeError{code: gate.ExitUsage, err: errorf("--token-file: %v", err)}
		}
		token = strings.TrimSpace(string(b))
	}
	var o gate.Options
	if err := tlsFiles.apply(&o); err != nil {
		return "", nil, &codeError{code: gate.ExitUsage, err: errorf("TLS (--ca-file, --cert-file, --key-file or $RDMAMESH_TLS_*): %v", err)}
	}
	return token, o.TLS, nil
}

// isTerminal reports whether w is an interactive terminal (progress bar) and
// not a pipe, file or CI log (plain lines).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
