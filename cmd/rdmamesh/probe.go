package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/verbs"
	"github.com/rdmamesh/rdmamesh/internal/pairtest"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// probeFabric opens the local RDMA for `rdmamesh probe` (device "" = all);
// tests put the simulated fabric here.
var probeFabric = func(device, gid string) (fabric.Fabric, func() error, error) {
	var devices []string
	if device != "" {
		devices = []string{device}
	}
	f, err := verbs.New(verbs.Options{Devices: devices, GID: gid})
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

func newProbeCmd() *cobra.Command {
	var listen, peer, device, gid, connect string
	var list, keep, asJSON bool
	var port int
	var connectTimeout time.Duration
	p := probe.DefaultTestParams()
	cmd := &cobra.Command{
		Use:   "probe (--listen [ADDR] | --peer HOST[:PORT] | --list)",
		Short: "Ad-hoc RDMA WRITE latency and bandwidth test between two hosts",
		Long: `probe measures one pair of HCAs the way ib_write_lat and ib_write_bw do, in one
run: start "rdmamesh probe --listen" on one host and "rdmamesh probe --peer HOST"
on the other. The two sides speak the workers' own probe-session exchange over
HTTP (default port ` + pairtest.DefaultPort + `): the QPs connect either with the QP information swapped
there ("--connect exchange", like perftest) or through RDMA CM ("--connect rdmacm",
like perftest's -R: address and route resolution, connect/accept, the buffer
details in the handshake's private data), which some RoCE setups require.
The measurement is RDMA WRITE ping-pong latency (one-way = RTT/2) followed by
a unidirectional RDMA WRITE stream. Both sides print the result; the
listener follows the peer's choice of parameters and connection mode.
"--list" shows the local ports and the GID each would use.`,
		Example: `  rdmamesh probe --listen
  rdmamesh probe --peer 10.0.0.1 --size 8 --iters 10000 --bw-size 65536 --json
  rdmamesh probe --peer 10.0.0.1 --connect rdmacm`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && cmd.Flags().Changed("listen") {
				// "--listen ADDR" (space, not '='): the optional value arrives as an argument.
				listen, args = args[0], nil
			}
			if len(args) > 0 {
				return &pairtest.ExitError{Code: 2, Err: fmt.Errorf("unexpected argument %q", args[0])}
			}
			if n := btoi(listen != "") + btoi(peer != "") + btoi(list); n != 1 {
				return &pairtest.ExitError{Code: 2, Err: errors.New("give exactly one of --listen [ADDR], --peer HOST[:PORT] or --list")}
			}
			p.Connect = connect
			if peer != "" {
				if err := p.Validate(); err != nil {
					return &pairtest.ExitError{Code: 2, Err: fmt.Errorf("%w (see --help)", err)}
				}
			} else if connect != probe.ConnectExchange {
				return &pairtest.ExitError{Code: 2, Err: errors.New("--connect is chosen by the initiator (--peer); the listener follows it")}
			}
			cmd.SilenceUsage = true
			fab, closeFab, err := probeFabric(device, gid)
			if err != nil {
				return &pairtest.ExitError{Code: 2, Err: err}
			}
			// Closing only releases device contexts as the command exits;
			// the test's outcome is already decided by then.
			defer func() { _ = closeFab() }()
			o := pairtest.Options{Endpoint: probe.Endpoint{Device: device, Port: port, GIDIndex: -1}, Params: p,
				ConnectTimeout: connectTimeout, JSON: asJSON, Keep: keep}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			switch {
			case list:
				return pairtest.List(ctx, fab, asJSON, out)
			case peer != "":
				return pairtest.Run(ctx, fab, o, peer, out)
			}
			return pairtest.Listen(ctx, fab, o, listen, out, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "", "serve one test on ADDR (default :"+pairtest.DefaultPort+")")
	f.Lookup("listen").NoOptDefVal = ":" + pairtest.DefaultPort
	f.StringVar(&peer, "peer", "", "run the test against a listener at HOST[:PORT]")
	f.BoolVar(&list, "list", false, "list local RDMA ports and the GID each would use")
	f.StringVar(&device, "device", "", "HCA to use, e.g. mlx5_0 or rxe0 (default: the first)")
	f.IntVar(&port, "port", 1, "HCA port")
	f.StringVar(&gid, "gid", "auto", `GID index: "auto" (IPv4 RoCE v2 entry; 0 on InfiniBand) or "index=N"`)
	f.IntVar(&p.LatencySize, "size", p.LatencySize, "latency message size in bytes")
	f.IntVar(&p.LatencyIters, "iters", p.LatencyIters, "latency iterations (after warm-up)")
	f.IntVar(&p.Warmup, "warmup", p.Warmup, "latency warm-up iterations, not measured")
	f.IntVar(&p.BWSize, "bw-size", p.BWSize, "bandwidth message size in bytes (0 skips bandwidth)")
	f.IntVar(&p.BWIters, "bw-iters", p.BWIters, "bandwidth messages")
	f.IntVar(&p.TxDepth, "tx-depth", p.TxDepth, "bandwidth writes in flight")
	f.IntVar(&p.ReadIters, "read-iters", 0, "also measure RDMA READ latency (like ib_read_lat) with this many reads of --size bytes; 0 skips it")
	f.DurationVar(&p.Timeout, "timeout", 30*time.Second, "deadline for each measurement")
	f.DurationVar(&connectTimeout, "connect-timeout", 15*time.Second, "how long --peer keeps retrying to reach the listener")
	f.StringVar(&connect, "connect", probe.ConnectExchange, "how the QPs connect: exchange (QP info over the session exchange) or rdmacm (RDMA CM)")
	f.BoolVar(&keep, "keep", false, "with --listen: serve tests until interrupted instead of exiting after one")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
