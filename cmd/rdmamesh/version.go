package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/internal/config"
)

// Set by the Makefile: -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = ""
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version and build information",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := commit
			if c == "" {
				if bi, ok := debug.ReadBuildInfo(); ok {
					for _, s := range bi.Settings {
						if s.Key == "vcs.revision" {
							c = s.Value
						}
					}
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "rdmamesh %s (commit %s, %s, %s/%s, verbs engine: %s)\n",
				version, orDash(c), runtime.Version(), runtime.GOOS, runtime.GOARCH, verbsBuild)
			return nil
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Inspect configuration"}
	cmd.AddCommand(&cobra.Command{
		Use:   "keys",
		Short: "List every config key with its default and environment variable",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d := config.Defaults()
			for _, k := range config.Keys() {
				fmt.Fprintf(cmd.OutOrStdout(), "%-26s %-34v %s\n", k, d[k], config.EnvName(k))
			}
			return nil
		},
	})
	return cmd
}
