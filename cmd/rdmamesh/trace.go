package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/internal/pathtrace"
)

// newTraceCmd traces RoCE v2 flows from this host: the operator's view of
// what the worker's POST /v1/trace answers the coordinator.
func newTraceCmd() *cobra.Command {
	var src, dst, sports string
	var o pathtrace.Options
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Trace the hops of RoCE v2 flows (a Paris traceroute with each flow's exact 5-tuple)",
		Long: "trace sends UDP probes with a flow's source and destination addresses (its GIDs' IPs), its UDP\n" +
			"source port and destination port 4791, TTL 1, 2, 3 …, and names each hop by its ICMP answer, so\n" +
			"the probes follow the flow's own ECMP path. A hop that does not answer is printed as ? with the\n" +
			"reason. No privileges beyond binding the source port are needed.",
		Example: "  rdmamesh trace --src 10.78.1.11 --dst 10.78.2.12 --sport 49441\n" +
			"  rdmamesh trace --src 10.78.1.11 --dst 10.78.2.12 --sport 49441,49476 --json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flows, err := traceFlows(src, dst, sports)
			if err != nil {
				return usageError(err)
			}
			if err := o.Validate(); err != nil {
				return usageError(fmt.Errorf("--max-ttl, --timeout or --pacing: %w", err))
			}
			t := pathtrace.NewTracer(pathtrace.Config{Options: o})
			var paths []pathtrace.Path
			var failed []error
			for _, f := range flows {
				p, err := t.Trace(cmd.Context(), f)
				if err != nil {
					failed = append(failed, fmt.Errorf("%s: %w", f, err))
					continue
				}
				paths = append(paths, p)
				if !asJSON {
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", f, p)
					for _, h := range p.Hops {
						if !h.Known() {
							fmt.Fprintf(cmd.OutOrStdout(), "  hop %d unknown: %s\n", h.TTL, h.Reason)
						}
					}
					fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", p.Why)
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(paths); err != nil {
					return err
				}
			}
			if len(failed) > 0 {
				return &doctorExit{code: 1, err: errors.Join(failed...)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&src, "src", "", "the flow's source address: the IP of the local GID it leaves from")
	f.StringVar(&dst, "dst", "", "the flow's destination address: the IP of the peer's GID")
	f.StringVar(&sports, "sport", "", "UDP source ports, comma-separated (a test's flow, as the matrix reports it)")
	f.IntVar(&o.MaxTTL, "max-ttl", 0, "highest TTL probed (0: 16)")
	f.DurationVar(&o.Timeout, "timeout", 0, "how long one probe waits for its answer (0: 500ms)")
	f.DurationVar(&o.Pacing, "pacing", 0, "least time between two probes (0: 50ms; switches police ICMP)")
	f.BoolVar(&asJSON, "json", false, "print the paths as JSON")
	return cmd
}

// traceFlows reads the flags into flows, naming the flag at fault.
func traceFlows(src, dst, sports string) ([]pathtrace.Flow, error) {
	s, err := netip.ParseAddr(src)
	if err != nil {
		return nil, fmt.Errorf("--src %q: give the IP address of the local GID the flow leaves from", src)
	}
	d, err := netip.ParseAddr(dst)
	if err != nil {
		return nil, fmt.Errorf("--dst %q: give the IP address of the peer's GID", dst)
	}
	if sports == "" {
		return nil, errors.New("--sport is empty: give the flows' UDP source ports, like --sport 49441,49476")
	}
	var flows []pathtrace.Flow
	for _, p := range strings.Split(sports, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("--sport %q: want UDP ports 1..65535, comma-separated", p)
		}
		f := pathtrace.Flow{Src: s, Dst: d, SrcPort: uint16(n)}
		if err := f.Validate(); err != nil {
			return nil, err
		}
		flows = append(flows, f)
	}
	return flows, nil
}
