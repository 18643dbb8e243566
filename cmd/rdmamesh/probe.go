package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/verbs"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// perftest listens on 18515; one above lets both run side by side.
const probeDefaultPort = "18516"

type probeOpts struct {
	listen, peer   string
	device         string
	port           int
	gid            string
	size, iters    int
	warmup         int
	bwSize         int
	bwIters        int
	readIters      int
	txDepth        int
	timeout        time.Duration
	connectTimeout time.Duration
	connect        string
	keep           bool
	list           bool
	json           bool
}

// exitError carries the process exit code to main: 1 the test failed,
// 2 bad usage or a host that cannot run the engine (main.go's convention).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

func newProbeCmd() *cobra.Command {
	var o probeOpts
	d := probe.DefaultTestParams()
	cmd := &cobra.Command{
		Use:   "probe (--listen [ADDR] | --peer HOST[:PORT] | --list)",
		Short: "Ad-hoc RDMA WRITE latency and bandwidth test between two hosts",
		Long: `probe measures one pair of HCAs the way ib_write_lat and ib_write_bw do, in one
run: start "rdmamesh probe --listen" on one host and "rdmamesh probe --peer HOST"
on the other. The test parameters travel over a small TCP exchange (default
port ` + probeDefaultPort + `); the QPs connect either with the QP information swapped there
("--connect exchange", like perftest) or through RDMA CM ("--connect rdmacm",
like perftest's -R: address and route resolution, connect/accept, the buffer
details in the handshake's private data), which some RoCE setups require.
The measurement is RDMA WRITE ping-pong latency (one-way = RTT/2) followed by
a unidirectional RDMA WRITE stream. Both sides print the result; the
listener follows the peer's choice of connection mode.
"--list" shows the local ports and the GID each would use.`,
		Example: `  rdmamesh probe --listen
  rdmamesh probe --peer 10.0.0.1 --size 8 --iters 10000 --bw-size 65536 --json
  rdmamesh probe --peer 10.0.0.1 --connect rdmacm`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && cmd.Flags().Changed("listen") {
				// "--listen ADDR" (space, not '='): the optional value arrives as an argument.
				o.listen = args[0]
				args = nil
			}
			if len(args) > 0 {
				return &exitError{2, fmt.Errorf("unexpected argument %q", args[0])}
			}
			modes := 0
			for _, on := range []bool{o.listen != "", o.peer != "", o.list} {
				if on {
					modes++
				}
			}
			if modes != 1 {
				return &exitError{2, errors.New("give exactly one of --listen [ADDR], --peer HOST[:PORT] or --list")}
			}
			cmd.SilenceUsage = true
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runProbe(ctx, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "", "serve one test on ADDR (default :"+probeDefaultPort+")")
	f.Lookup("listen").NoOptDefVal = ":" + probeDefaultPort
	f.StringVar(&o.peer, "peer", "", "run the test against a listener at HOST[:PORT]")
	f.BoolVar(&o.list, "list", false, "list local RDMA ports and the GID each would use")
	f.StringVar(&o.device, "device", "", "HCA to use, e.g. mlx5_0 or rxe0 (default: the first)")
	f.IntVar(&o.port, "port", 1, "HCA port")
	f.StringVar(&o.gid, "gid", "auto", `GID index: "auto" (IPv4 RoCE v2 entry; 0 on InfiniBand) or "index=N"`)
	f.IntVar(&o.size, "size", d.LatencySize, "latency message size in bytes")
	f.IntVar(&o.iters, "iters", d.LatencyIters, "latency iterations (after warm-up)")
	f.IntVar(&o.warmup, "warmup", d.Warmup, "latency warm-up iterations, not measured")
	f.IntVar(&o.bwSize, "bw-size", d.BWSize, "bandwidth message size in bytes (0 skips bandwidth)")
	f.IntVar(&o.bwIters, "bw-iters", d.BWIters, "bandwidth messages")
	f.IntVar(&o.txDepth, "tx-depth", d.TxDepth, "bandwidth writes in flight")
	f.IntVar(&o.readIters, "read-iters", 0, "also measure RDMA READ latency (like ib_read_lat) with this many reads of --size bytes; 0 skips it")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "deadline for each measurement")
	f.DurationVar(&o.connectTimeout, "connect-timeout", 15*time.Second, "how long --peer keeps retrying to reach the listener")
	f.StringVar(&o.connect, "connect", probe.ConnectExchange, "how the QPs connect: exchange (QP info over TCP) or rdmacm (RDMA CM)")
	f.BoolVar(&o.keep, "keep", false, "with --listen: serve tests until interrupted instead of exiting after one")
	f.BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

func (o probeOpts) params() probe.TestParams {
	return probe.TestParams{LatencySize: o.size, LatencyIters: o.iters, Warmup: o.warmup,
		BWSize: o.bwSize, BWIters: o.bwIters, TxDepth: o.txDepth, Timeout: o.timeout, Connect: o.connect,
		ReadIters: o.readIters}
}

func (o probeOpts) endpoint() probe.Endpoint {
	return probe.Endpoint{Device: o.device, Port: o.port, GIDIndex: -1}
}

func runProbe(ctx context.Context, o probeOpts, stdout, stderr io.Writer) error {
	if o.peer != "" {
		if err := o.params().Validate(); err != nil {
			return &exitError{2, fmt.Errorf("%w (see --help)", err)}
		}
	} else if o.connect != probe.ConnectExchange {
		return &exitError{2, errors.New("--connect is chosen by the initiator (--peer); the listener follows it")}
	}
	var devices []string
	if o.device != "" {
		devices = []string{o.device}
	}
	fab, err := verbs.New(verbs.Options{Devices: devices, GID: o.gid})
	if err != nil {
		if errors.Is(err, verbs.ErrUnavailable) {
			return &exitError{2, err}
		}
		return &exitError{2, err}
	}
	defer fab.Close()
	switch {
	case o.list:
		return probeList(ctx, fab, o, stdout)
	case o.peer != "":
		return probeInitiator(ctx, fab, o, stdout)
	}
	return probeListen(ctx, fab, o, stdout, stderr)
}

// probeMsg is one line of the TCP exchange. The initiator sends hello (its
// QP and the parameters), the responder answers ready (its QP) or error;
// after measuring, the initiator sends result and the responder closes with
// bye, carrying its own side's failure if any.
type probeMsg struct {
	Version   int               `json:"version"`
	Kind      string            `json:"kind"`
	Params    *probe.TestParams `json:"params,omitempty"`
	QP        *probe.QPInfo     `json:"qp,omitempty"`
	Latency   *probe.Latency    `json:"latency,omitempty"`
	ReadLat   *probe.Latency    `json:"read_latency,omitempty"`
	Bandwidth *probe.Bandwidth  `json:"bandwidth,omitempty"`
	Error     *probe.Error      `json:"error,omitempty"`
}

type probeConn struct {
	c net.Conn
	r *bufio.Reader
}

func (p probeConn) send(m probeMsg) error {
	m.Version = probe.Version
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = p.c.Write(append(b, '\n'))
	return err
}

func (p probeConn) recv(want ...string) (probeMsg, error) {
	line, err := p.r.ReadBytes('\n')
	if err != nil {
		return probeMsg{}, fmt.Errorf("peer closed the exchange: %w", err)
	}
	var m probeMsg
	if err := json.Unmarshal(line, &m); err != nil {
		return m, fmt.Errorf("bad message from peer: %w", err)
	}
	if m.Version != probe.Version {
		return m, fmt.Errorf("peer speaks protocol version %d, this rdmamesh speaks %d: run the same version on both sides", m.Version, probe.Version)
	}
	if m.Kind == "error" && m.Error != nil {
		return m, m.Error
	}
	for _, w := range want {
		if m.Kind == w {
			return m, nil
		}
	}
	return m, fmt.Errorf("unexpected %q message from peer (want %v)", m.Kind, want)
}

func peerLost(err error) *probe.Error {
	var pe *probe.Error
	if errors.As(err, &pe) {
		return pe
	}
	return &probe.Error{Class: probe.ClassPeerLost, Cause: err.Error(),
		Fix: "check the other side's output; both must run the same rdmamesh version"}
}

func dialRetry(ctx context.Context, addr string, limit time.Duration) (net.Conn, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, probeDefaultPort)
	}
	deadline := time.Now().Add(limit)
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c, nil
		}
		// The listener may still be starting; keep trying until the limit.
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("cannot reach listener at %s: %w", addr, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

type probeReport struct {
	Role      string           `json:"role"`
	Params    probe.TestParams `json:"params"`
	Local     probe.QPInfo     `json:"local"`
	Remote    *probe.QPInfo    `json:"remote,omitempty"`
	PathMTU   int              `json:"path_mtu,omitempty"`
	Latency   *probe.Latency   `json:"latency,omitempty"`
	ReadLat   *probe.Latency   `json:"read_latency,omitempty"`
	Bandwidth *probe.Bandwidth `json:"bandwidth,omitempty"`
	Error     *probe.Error     `json:"error,omitempty"`
	PeerError *probe.Error     `json:"peer_error,omitempty"`
}

func (r *probeReport) finish(out io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else {
		printReport(out, r)
	}
	switch {
	case r.Error != nil:
		return &exitError{1, r.Error}
	case r.PeerError != nil:
		return &exitError{1, fmt.Errorf("peer: %w", r.PeerError)}
	}
	return nil
}

func probeInitiator(ctx context.Context, fab *verbs.Fabric, o probeOpts, out io.Writer) error {
	p := o.params()
	rep := &probeReport{Role: "initiator", Params: p}
	sess, err := fab.Open(ctx, o.endpoint(), p)
	if err != nil {
		rep.Error = probe.Classify(err)
		return rep.finish(out, o.json)
	}
	defer sess.Close()
	rep.Local = sess.Info()

	c, err := dialRetry(ctx, o.peer, o.connectTimeout)
	if err != nil {
		rep.Error = &probe.Error{Class: probe.ClassPeerLost, Cause: err.Error(),
			Fix: "start `rdmamesh probe --listen` on the peer and check TCP reachability"}
		return rep.finish(out, o.json)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3*p.Timeout + 30*time.Second))
	pc := probeConn{c: c, r: bufio.NewReader(c)}
	info := sess.Info()
	if err := pc.send(probeMsg{Kind: "hello", Params: &p, QP: &info}); err != nil {
		rep.Error = peerLost(err)
		return rep.finish(out, o.json)
	}
	m, err := pc.recv("ready")
	if err != nil {
		rep.PeerError = peerLost(err)
		return rep.finish(out, o.json)
	}
	rep.Remote = m.QP
	rep.PathMTU = min(rep.Local.MTU, m.QP.MTU)

	res := probeMsg{Kind: "result"}
	if err := sess.Connect(ctx, *m.QP); err != nil {
		rep.Error = probe.Classify(err)
	}
	if rep.Error == nil {
		if lat, err := sess.Latency(ctx, p); err != nil {
			rep.Error = probe.Classify(err)
		} else {
			rep.Latency = &lat
		}
	}
	if rep.Error == nil && p.ReadIters > 0 {
		if rl, err := sess.(fabric.ReadSession).ReadLatency(ctx, p); err != nil {
			rep.Error = probe.Classify(err)
		} else {
			rep.ReadLat = &rl
		}
	}
	if rep.Error == nil && p.BWSize > 0 {
		if bw, err := sess.Bandwidth(ctx, p); err != nil {
			rep.Error = probe.Classify(err)
		} else {
			rep.Bandwidth = &bw
		}
	}
	res.Latency, res.Bandwidth, res.Error, res.ReadLat = rep.Latency, rep.Bandwidth, rep.Error, rep.ReadLat
	if err := pc.send(res); err == nil {
		if _, err := pc.recv("bye"); err != nil && rep.Error == nil {
			rep.PeerError = peerLost(err)
		}
	}
	return rep.finish(out, o.json)
}

func probeListen(ctx context.Context, fab *verbs.Fabric, o probeOpts, out, errOut io.Writer) error {
	addr := o.listen
	if _, _, err := net.SplitHostPort(addr); err != nil {
		if _, perr := strconv.Atoi(addr); perr == nil {
			addr = ":" + addr
		} else {
			addr = net.JoinHostPort(addr, probeDefaultPort)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &exitError{2, fmt.Errorf("listen: %w", err)}
	}
	defer ln.Close()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	if !o.json {
		fmt.Fprintf(errOut, "rdmamesh probe: waiting for a peer on %s\n", ln.Addr())
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return &exitError{1, fmt.Errorf("accept: %w", err)}
		}
		err = serveProbe(ctx, fab, o, c, out)
		c.Close()
		if !o.keep {
			return err
		}
		if err != nil {
			fmt.Fprintln(errOut, "rdmamesh probe:", err)
		}
	}
}

func serveProbe(ctx context.Context, fab *verbs.Fabric, o probeOpts, c net.Conn, out io.Writer) error {
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	pc := probeConn{c: c, r: bufio.NewReader(c)}
	rep := &probeReport{Role: "responder"}
	m, err := pc.recv("hello")
	if err != nil || m.Params == nil || m.QP == nil {
		if err == nil {
			err = errors.New("hello without parameters or QP info")
		}
		rep.PeerError = peerLost(err)
		return rep.finish(out, o.json)
	}
	p := *m.Params
	rep.Params, rep.Remote = p, m.QP
	_ = c.SetDeadline(time.Now().Add(3*p.Timeout + 30*time.Second))
	sess, err := fab.Open(ctx, o.endpoint(), p)
	var info probe.QPInfo
	if err == nil {
		rep.Local = sess.Info()
		defer sess.Close()
		if p.Connect == probe.ConnectRDMACM {
			// Listen now, accept once the initiator has our address.
			info, err = sess.(fabric.CMSession).Listen(ctx)
		} else {
			err = sess.Connect(ctx, *m.QP)
			info = sess.Info()
		}
	}
	if err != nil {
		rep.Error = probe.Classify(err)
		_ = pc.send(probeMsg{Kind: "error", Error: rep.Error})
		return rep.finish(out, o.json)
	}
	rep.Local = info
	rep.PathMTU = min(rep.Local.MTU, m.QP.MTU)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	responded := make(chan error, 1)
	go func() {
		if p.Connect == probe.ConnectRDMACM {
			if err := sess.(fabric.CMSession).Accept(rctx, *m.QP); err != nil {
				responded <- err
				return
			}
		}
		responded <- sess.Respond(rctx, p)
	}()
	if err := pc.send(probeMsg{Kind: "ready", QP: &info}); err != nil {
		cancel()
		<-responded
		rep.PeerError = peerLost(err)
		return rep.finish(out, o.json)
	}
	res, err := pc.recv("result")
	if err != nil || res.Error != nil {
		// The initiator gave up; stop answering instead of waiting out the deadline.
		cancel()
	}
	rerr := <-responded
	if err != nil {
		rep.PeerError = peerLost(err)
	} else {
		rep.Latency, rep.Bandwidth, rep.PeerError, rep.ReadLat = res.Latency, res.Bandwidth, res.Error, res.ReadLat
	}
	if rerr != nil && rep.PeerError == nil {
		rep.Error = probe.Classify(rerr)
	}
	_ = pc.send(probeMsg{Kind: "bye", Error: rep.Error})
	return rep.finish(out, o.json)
}

func probeList(ctx context.Context, fab *verbs.Fabric, o probeOpts, out io.Writer) error {
	ports, err := fab.Ports(ctx)
	if err != nil {
		return &exitError{1, err}
	}
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(ports)
	}
	printPorts(out, ports)
	return nil
}

var probeRule = strings.Repeat("-", 95)

// printReport lays the result out like perftest does, so people who read
// ib_write_lat/ib_write_bw output find every figure where they expect it.
func printReport(w io.Writer, r *probeReport) {
	p := r.Params
	fmt.Fprintln(w, probeRule)
	fmt.Fprintf(w, "%50s\n", "RDMA_Write Latency + BW Test (rdmamesh probe, "+r.Role+")")
	fmt.Fprintf(w, " Device         : %s\n", r.Local.Device)
	fmt.Fprintf(w, " Port           : %d\n", r.Local.Port)
	fmt.Fprintf(w, " Link type      : %s\n", r.Local.LinkLayer)
	if r.Local.LinkLayer == "Ethernet" {
		fmt.Fprintf(w, " GID index      : %d (%s)\n", r.Local.GIDIndex, r.Local.GIDType)
	}
	if r.PathMTU > 0 {
		fmt.Fprintf(w, " Mtu            : %d[B]\n", r.PathMTU)
	}
	if p.Connect == probe.ConnectRDMACM {
		fmt.Fprintf(w, " Connection     : RDMA CM (%s)\n", orDash(r.remoteCM()))
	} else {
		fmt.Fprintf(w, " Connection     : QP info exchange\n")
	}
	fmt.Fprintf(w, " TX depth       : %d\n", p.TxDepth)
	fmt.Fprintf(w, " Warm-up        : %d iterations\n", p.Warmup)
	fmt.Fprintln(w, probeRule)
	if r.Local.QPN != 0 {
		printAddr(w, "local address", r.Local)
	}
	if r.Remote != nil {
		printAddr(w, "remote address", *r.Remote)
	}
	fmt.Fprintln(w, probeRule)
	if l := r.Latency; l != nil {
		us := func(ns float64) string { return fmt.Sprintf("%.2f", ns/1000) }
		tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
		fmt.Fprintln(tw, " #bytes\t#iterations\tt_min[usec]\tt_max[usec]\tt_typical[usec]\tt_stdev[usec]\t99% percentile[usec]\t99.9% percentile[usec]")
		fmt.Fprintf(tw, " %d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", p.LatencySize, l.Samples, us(l.MinNs), us(l.MaxNs),
			us(l.P50Ns), us(l.StdevNs), us(l.P99Ns), us(l.P999Ns))
		tw.Flush()
		fmt.Fprintln(w, probeRule)
	}
	if l := r.ReadLat; l != nil {
		// ib_read_lat's table: a read is one round trip, not halved.
		us := func(ns float64) string { return fmt.Sprintf("%.2f", ns/1000) }
		fmt.Fprintln(w, " RDMA_Read latency (round trip)")
		tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
		fmt.Fprintln(tw, " #bytes\t#iterations\tt_min[usec]\tt_max[usec]\tt_typical[usec]\tt_stdev[usec]\t99% percentile[usec]\t99.9% percentile[usec]")
		fmt.Fprintf(tw, " %d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", p.LatencySize, l.Samples, us(l.MinNs), us(l.MaxNs),
			us(l.P50Ns), us(l.StdevNs), us(l.P99Ns), us(l.P999Ns))
		tw.Flush()
		fmt.Fprintln(w, probeRule)
	}
	if b := r.Bandwidth; b != nil {
		tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
		fmt.Fprintln(tw, " #bytes\t#iterations\tBW average[Gb/sec]\tMsgRate[Mpps]\tDuration[sec]")
		fmt.Fprintf(tw, " %d\t%d\t%.2f\t%.6f\t%.3f\n", p.BWSize, p.BWIters, b.Gbps, b.MsgRate/1e6, b.Duration)
		tw.Flush()
		fmt.Fprintln(w, probeRule)
	}
	printErr(w, "error", r.Error)
	printErr(w, "peer error", r.PeerError)
}

// remoteCM is the RDMA CM address the test connected to (or listened on).
func (r *probeReport) remoteCM() string {
	if r.Remote != nil && r.Remote.CMAddr != "" {
		return r.Remote.CMAddr
	}
	return r.Local.CMAddr
}

func printAddr(w io.Writer, label string, q probe.QPInfo) {
	fmt.Fprintf(w, " %-15s: LID %#04x QPN %#06x PSN %#06x RKey %#08x VAddr %#016x\n",
		label, q.LID, q.QPN, q.PSN, q.RKey, q.Addr)
	if q.GID != "" {
		fmt.Fprintf(w, " %-15s  GID: %s (index %d, %s) on %s\n", "", q.GID, q.GIDIndex, q.GIDType, q.Node)
	}
}

func printErr(w io.Writer, label string, e *probe.Error) {
	if e == nil {
		return
	}
	fmt.Fprintf(w, " %s: %s\n", label, e.Error())
	if e.Fix != "" {
		fmt.Fprintf(w, " fix: %s\n", e.Fix)
	}
	fmt.Fprintln(w, probeRule)
}

func printPorts(w io.Writer, ports []probe.Port) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RAIL\tDEVICE\tPORT\tSTATE\tLINK\tRATE\tMTU\tGID\tTYPE\tNETDEV\tUSABLE\tWHY")
	for _, p := range ports {
		why := p.GIDReason
		if !p.Usable {
			why = p.UnusableWhy
		}
		gid := "-"
		if p.GIDIndex >= 0 && p.GID != "" {
			gid = fmt.Sprintf("%d:%s", p.GIDIndex, p.GID)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%g\t%d\t%s\t%s\t%s\t%v\t%s\n", p.Rail, p.Device, p.Port, p.State,
			p.LinkLayer, p.RateGbps, p.MTU, gid, p.GIDType, p.Netdev, p.Usable, why)
	}
	tw.Flush()
}
