package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/internal/gate"
)

func newGateCmd() *cobra.Command {
	var o gate.Options
	cmd := &cobra.Command{
		Use:   "gate --coordinator URL",
		Short: "Run a sweep (or judge the latest) and exit 0 healthy, 1 unhealthy, 2 usage/infrastructure error",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Request.Mode != "" && o.Request.Mode != "quick" && o.Request.Mode != "full" {
				return &codeError{code: gate.ExitUsage, err: errorf("--mode %q: want quick or full", o.Request.Mode)}
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
	f.StringVar(&o.JSONFile, "json", "", "write the matrix as JSON to this file")
	f.StringVar(&o.JUnitFile, "junit", "", "write JUnit XML (one testcase per pair and rail) to this file")
	f.StringVar(&o.Request.Mode, "mode", "", "sweep mode: quick or full (default: the coordinator's)")
	f.StringSliceVar(&o.Request.Nodes, "nodes", nil, "only these workers (default: all)")
	f.DurationVar(&o.Timeout, "timeout", 30*time.Minute, "give up (exit 2) after this long")
	return cmd
}
