package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/gate"
)

// newCablingCmd asks a coordinator whether every cable is where the plan
// says; the judging is the coordinator's (GET /api/v1/cabling), the
// exit code and files gate.RunCabling's.
func newCablingCmd() *cobra.Command {
	var o gate.CablingOptions
	var tokenFile string
	var tlsFiles gateTLS
	var switchLLDP []string
	cmd := &cobra.Command{
		Use:   "cabling --coordinator URL",
		Short: "Check every HCA port's cable against the plan (LLDP neighbours, traced paths); exit 1 on a mismatch",
		Long: "cabling prints, for every HCA port and cable between switches of the coordinator's topology, the far end\n" +
			"the plan expects, the one its LLDP neighbour or the traced paths of a sweep show, and a verdict:\n" +
			"ok, swapped, wrong-rail, wrong-leaf, wrong-switch, wrong-port, missing, unexpected, unknown-switch,\n" +
			"name-pattern or no-evidence. Without a topology it surveys what is seen for rail-optimization\n" +
			"violations and says what a plan would add.\n\n" +
			"--switch-lldp gives the switches' own LLDP tables (lldpcli show neighbors -f json on each switch), so\n" +
			"cables between switches are judged by port: one on the wrong port, or gone, is found.\n\n" +
			"Exit codes: 0 every port ok or without evidence; 1 a mismatch (any other verdict; no-evidence too\n" +
			"with --strict); 2 usage; 3 the coordinator could not be asked.",
		Example: "  rdmamesh cabling --coordinator http://coordinator:8080 --csv cabling.csv\n" +
			"  rdmamesh cabling --coordinator http://coordinator:8080 --switch-lldp switch-lldp/ --switch-lldp spine01=spine01.json\n" +
			"  rdmamesh cabling --coordinator http://coordinator:8080 --sweep 20250101T000000Z-ab12 --junit cabling.xml --warn-only",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.Token, o.TLS, err = apiAccess(tokenFile, tlsFiles); err != nil {
				return err
			}
			var notes []string
			if o.Switches, notes, err = switchTables(switchLLDP); err != nil {
				return err
			}
			for _, n := range notes {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: "+n)
			}
			if code := gate.RunCabling(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return exitCode(code)
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &codeError{code: gate.ExitUsage, err: fmt.Errorf("%w (%s --help lists the flags)", err, c.CommandPath())}
	})
	f := cmd.Flags()
	f.StringVar(&o.Coordinator, "coordinator", "", "coordinator base URL, e.g. http://coordinator:8080")
	f.StringVar(&o.Sweep, "sweep", "", "the sweep whose traced paths are evidence (default: the newest)")
	f.StringArrayVar(&switchLLDP, "switch-lldp", nil, "a switch's LLDP table, as `SPEC`: FILE (lldpcli show neighbors -f json, json0 or keyvalue; "+
		"lldpcli show chassis saved with it names the switch), NAME=FILE, or a directory of them (leaf05.json is leaf05's); repeatable")
	f.StringVar(&o.JSONFile, "json", "", "write every port's verdict as JSON to this file")
	f.StringVar(&o.CSVFile, "csv", "", "write the findings as CSV for a technician (end, node, hca, rail, expected, found, verdict, with, evidence, action, detail)")
	f.StringVar(&o.JUnitFile, "junit", "", "write JUnit XML (a testcase per node and per switch with uplinks) to this file")
	f.BoolVar(&o.Strict, "strict", false, "fail on ports without evidence (no LLDP neighbour, no traced path) too")
	f.BoolVar(&o.WarnOnly, "warn-only", false, "print mismatches with a warning line and exit 0")
	f.DurationVar(&o.Timeout, "timeout", time.Minute, "give up (exit 3) after this long")
	f.StringVar(&tokenFile, "token-file", "", "file holding the API bearer token (default: $RDMAMESH_AUTH_TOKEN)")
	tlsFiles.addFlags(f)
	return cmd
}
