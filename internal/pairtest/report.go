package pairtest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Report is one side's view of a test, printed like perftest's or as JSON.
type Report struct {
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

	closed bool // listener: the initiator closed the session
}

// Finish prints the report and returns exit 1 when either side failed.
func (r *Report) Finish(out io.Writer, asJSON bool) error {
	if asJSON {
		if err := writeJSON(out, r); err != nil {
			return err
		}
	} else {
		printReport(out, r)
	}
	switch {
	case r.Error != nil:
		return &ExitError{1, r.Error}
	case r.PeerError != nil:
		return &ExitError{1, fmt.Errorf("peer: %w", r.PeerError)}
	}
	return nil
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var rule = strings.Repeat("-", 95)

// printReport lays the result out like perftest does, so people who read
// ib_write_lat/ib_write_bw output find every figure where they expect it.
func printReport(w io.Writer, r *Report) {
	p := r.Params
	fmt.Fprintln(w, rule)
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
	fmt.Fprintln(w, rule)
	if r.Local.QPN != 0 {
		printAddr(w, "local address", r.Local)
	}
	if r.Remote != nil {
		printAddr(w, "remote address", *r.Remote)
	}
	fmt.Fprintln(w, rule)
	if l := r.Latency; l != nil {
		printLatency(w, p.LatencySize, l)
	}
	if l := r.ReadLat; l != nil {
		// ib_read_lat's table: a read is one round trip, not halved.
		fmt.Fprintln(w, " RDMA_Read latency (round trip)")
		printLatency(w, p.LatencySize, l)
	}
	if b := r.Bandwidth; b != nil {
		tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
		fmt.Fprintln(tw, " #bytes\t#iterations\tBW average[Gb/sec]\tMsgRate[Mpps]\tDuration[sec]")
		fmt.Fprintf(tw, " %d\t%d\t%.2f\t%.6f\t%.3f\n", p.BWSize, p.BWIters, b.Gbps, b.MsgRate/1e6, b.Duration)
		tw.Flush()
		fmt.Fprintln(w, rule)
	}
	printErr(w, "error", r.Error)
	printErr(w, "peer error", r.PeerError)
}

func printLatency(w io.Writer, size int, l *probe.Latency) {
	us := func(ns float64) string { return fmt.Sprintf("%.2f", ns/1000) }
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, " #bytes\t#iterations\tt_min[usec]\tt_max[usec]\tt_typical[usec]\tt_stdev[usec]\t99% percentile[usec]\t99.9% percentile[usec]")
	fmt.Fprintf(tw, " %d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", size, l.Samples, us(l.MinNs), us(l.MaxNs),
		us(l.P50Ns), us(l.StdevNs), us(l.P99Ns), us(l.P999Ns))
	tw.Flush()
	fmt.Fprintln(w, rule)
}

// remoteCM is the RDMA CM address the test connected to (or listened on).
func (r *Report) remoteCM() string {
	if r.Remote != nil && r.Remote.CMAddr != "" {
		return r.Remote.CMAddr
	}
	return r.Local.CMAddr
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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
	fmt.Fprintln(w, rule)
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
