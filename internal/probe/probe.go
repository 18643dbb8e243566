// Package probe is the vocabulary every part of rdmamesh shares about a
// test: endpoints, rail pairs, QP information, test parameters, what a
// test measured, and the failure classes every fabric provider (verbs or
// simulated) reports. How processes put these into messages and records
// is internal/wire's job.
package probe

import (
	"errors"
	"fmt"
	"time"
)

// Version is the inventory's format version (Inventory.Version, served as
// JSON on the worker's GET /v1/inventory); the coordinator refuses another.
const Version = 1

// Class names a failure the same way for the verbs engine and the simulator,
// so the matrix, the gate and the UI never need to know which produced it.
type Class string

const (
	ClassOK            Class = "ok"
	ClassPortDown      Class = "port-down"      // port not ACTIVE, device gone
	ClassRetryExceeded Class = "retry-exceeded" // WC status 12: packets lost on the path
	ClassTimeout       Class = "timeout"        // no completion / pair deadline hit
	ClassPeerLost      Class = "peer-lost"      // remote worker unreachable or died
	ClassInvalidGID    Class = "invalid-gid"    // RTR EINVAL: GID index missing or wrong type
	ClassMTUMismatch   Class = "mtu-mismatch"   // large writes fail while small ones pass
	ClassNoNetdev      Class = "no-netdev"      // GID's netdev not in this netns (ENODEV at RTR)
	ClassResource      Class = "resource"       // ibv_reg_mr ENOMEM (memlock) and friends
	ClassSkipped       Class = "skipped"        // not tested, e.g. endpoint marked unusable
	ClassInternal      Class = "internal"       // a bug or an unexpected local error
	// ClassTester: the tool's own host resources failed (this process out
	// of file descriptors or memory). Never the fabric's fault: the sweep
	// is not judged and the gate exits 3.
	ClassTester Class = "tester"
	// ClassUnreachable: a worker's API could not be reached over the
	// control network while gossip still saw it alive (a firewall, a
	// routing problem, a wrong advertised address). The test did not run:
	// nothing is known of the fabric, and the cell is untested.
	ClassUnreachable Class = "unreachable"
)

// Failed reports whether the class means the cell did not measure.
func (c Class) Failed() bool { return c != ClassOK }

// Error is a classified failure. It says where it happened (verb, errno,
// work-completion status) and what the operator should do about it.
type Error struct {
	Class    Class  `json:"class"`
	Verb     string `json:"verb,omitempty"`      // e.g. ibv_modify_qp(RTR)
	Errno    int    `json:"errno,omitempty"`     // errno from the verb
	WCStatus int    `json:"wc_status,omitempty"` // ibv_wc_status, 0 when not from a completion
	Cause    string `json:"cause"`
	Fix      string `json:"fix,omitempty"`
}

func (e *Error) Error() string {
	s := string(e.Class)
	if e.Verb != "" {
		s += " at " + e.Verb
	}
	if e.Errno != 0 {
		s += fmt.Sprintf(" (errno %d)", e.Errno)
	}
	if e.WCStatus != 0 {
		s += fmt.Sprintf(" (wc status %d)", e.WCStatus)
	}
	return s + ": " + e.Cause
}

// Unreachable classifies a failed dial of worker dst's API at api from
// from: unreachable when gossip sees dst alive (alive), a lost peer when
// it does not or cannot tell.
func Unreachable(alive bool, dst, api, from string, err error) *Error {
	if alive {
		return &Error{Class: ClassUnreachable,
			Cause: fmt.Sprintf("cannot reach worker %s at %s from %s while gossip sees it alive: %v; the test did not run", dst, api, from, err),
			Fix: fmt.Sprintf("the control network, not the fabric: check that %s's API port is open to %s (firewall, security group, "+
				"worker.api_advertise) and that the address resolves to the worker", dst, from)}
	}
	return &Error{Class: ClassPeerLost, Cause: fmt.Sprintf("cannot reach worker %s at %s: %v", dst, api, err),
		Fix: "check that the rdmamesh worker on " + dst + " is running and its API port is reachable from " + from}
}

// Classify turns any error into a classified one; unknown errors are internal.
func Classify(err error) *Error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return &Error{Class: ClassInternal, Cause: err.Error(),
		Fix: "report this as a bug with the worker log"}
}

// Endpoint selects one HCA port on one node for a test.
type Endpoint struct {
	Device   string `json:"device"`
	Port     int    `json:"port"`
	GIDIndex int    `json:"gid_index"` // -1 lets the provider choose
	Rail     int    `json:"rail"`
	// FlowLabel, when not 0, is the GRH flow label this end's QP sends
	// with (20 bits). On RoCE v2 it sets the packets' UDP source port
	// (RoCEv2Sport), the field ECMP hashes: a link sweep steers a test
	// onto a chosen path with it. 0 leaves it to the provider.
	FlowLabel uint32 `json:"flow_label,omitempty"`
}

// RailPair is one rail of a pair test: which HCA port on each side.
type RailPair struct {
	Rail int      `json:"rail"`
	Src  Endpoint `json:"src"`
	Dst  Endpoint `json:"dst"`
}

// QPInfo is what two sides exchange to connect an RC QP pair, like
// perftest's "local address" lines.
type QPInfo struct {
	Node      string `json:"node"`
	Device    string `json:"device"`
	Port      int    `json:"port"`
	LinkLayer string `json:"link_layer"` // InfiniBand | Ethernet
	QPN       uint32 `json:"qpn"`
	PSN       uint32 `json:"psn"`
	LID       uint16 `json:"lid"`
	GID       string `json:"gid"`
	GIDIndex  int    `json:"gid_index"`
	GIDType   string `json:"gid_type,omitempty"` // RoCE v2, IB/RoCE v1
	MTU       int    `json:"mtu"`                // active MTU in bytes
	RKey      uint32 `json:"rkey"`
	Addr      uint64 `json:"addr"`
	Size      int    `json:"size"` // bytes registered at Addr
	// Netdev and NetdevMTU name the Ethernet device under a RoCE port, so
	// an MTU difference between the ends can be reported with its cause.
	Netdev    string `json:"netdev,omitempty"`
	NetdevMTU int    `json:"netdev_mtu,omitempty"`
	// CMAddr is where the responder listens for RDMA CM (ip:port) when the
	// test connects with ConnectRDMACM; empty otherwise.
	CMAddr string `json:"cm_addr,omitempty"`
	// UDPSport is the RoCE v2 UDP source port of this QP's packets, the
	// one field of the 5-tuple that ECMP hashes which differs per QP, so
	// it names the path a test took; 0 when unknown or not RoCE v2.
	UDPSport uint16 `json:"udp_sport,omitempty"`
}

// TestParams says what to measure on a connected session.
type TestParams struct {
	LatencySize  int           `json:"latency_size"`
	LatencyIters int           `json:"latency_iters"`
	Warmup       int           `json:"warmup"`
	BWSize       int           `json:"bw_size"` // 0: skip bandwidth
	BWIters      int           `json:"bw_iters"`
	TxDepth      int           `json:"tx_depth"`
	Timeout      time.Duration `json:"timeout"`
	// ReadIters > 0 adds an RDMA READ latency measurement (like
	// ib_read_lat, LatencySize bytes, after Warmup reads) between the
	// write ping-pong and the bandwidth stream; 0 skips it.
	ReadIters int `json:"read_iters,omitempty"`
	// Connect is how the two ends connect their QPs: "" or ConnectExchange
	// (QP info swapped over the worker API) or ConnectRDMACM (librdmacm
	// resolve/connect/accept, which some RoCE setups require).
	Connect string `json:"connect,omitempty"`
}

// Connection modes for TestParams.Connect.
const (
	ConnectExchange = "exchange"
	ConnectRDMACM   = "rdmacm"
)

// DefaultTestParams are small enough for a sweep round to take milliseconds
// on real hardware while still giving a stable p99.
func DefaultTestParams() TestParams {
	return TestParams{LatencySize: 8, LatencyIters: 1000, Warmup: 100,
		BWSize: 65536, BWIters: 200, TxDepth: 64, Timeout: 5 * time.Second}
}

// Validate rejects parameters a provider must never be handed.
func (p TestParams) Validate() error {
	switch {
	case p.LatencySize < 1 || p.LatencySize > 1<<20:
		return fmt.Errorf("latency_size %d out of range: use 1..1048576 bytes", p.LatencySize)
	case p.LatencyIters < 1 || p.LatencyIters > 1_000_000:
		return fmt.Errorf("latency_iters %d out of range: use 1..1000000", p.LatencyIters)
	case p.Warmup < 0 || p.Warmup > 1_000_000:
		return fmt.Errorf("warmup %d out of range: use 0..1000000", p.Warmup)
	case p.BWSize < 0 || p.BWSize > 1<<30:
		return fmt.Errorf("bw_size %d out of range: use 0 (skip) .. 1073741824 bytes", p.BWSize)
	case p.BWSize > 0 && (p.BWIters < 1 || p.BWIters > 10_000_000):
		return fmt.Errorf("bw_iters %d out of range: use 1..10000000", p.BWIters)
	case p.BWSize > 0 && (p.TxDepth < 1 || p.TxDepth > 4096):
		return fmt.Errorf("tx_depth %d out of range: use 1..4096", p.TxDepth)
	case p.Timeout <= 0 || p.Timeout > 10*time.Minute:
		return fmt.Errorf("timeout %s out of range: use a positive duration up to 10m", p.Timeout)
	case p.ReadIters < 0 || p.ReadIters > 1_000_000:
		return fmt.Errorf("read_iters %d out of range: use 0 (skip) .. 1000000", p.ReadIters)
	case p.Connect != "" && p.Connect != ConnectExchange && p.Connect != ConnectRDMACM:
		return fmt.Errorf("connect %q: want %s or %s", p.Connect, ConnectExchange, ConnectRDMACM)
	}
	return nil
}

// Latency summarises one-way latency (RTT/2) samples, in nanoseconds.
type Latency struct {
	Samples int     `json:"samples"`
	MinNs   float64 `json:"min_ns"`
	P50Ns   float64 `json:"p50_ns"`
	P90Ns   float64 `json:"p90_ns"`
	P99Ns   float64 `json:"p99_ns"`
	P999Ns  float64 `json:"p999_ns"`
	MaxNs   float64 `json:"max_ns"`
	StdevNs float64 `json:"stdev_ns"`
}

// Bandwidth is one direction's stream result.
type Bandwidth struct {
	Gbps     float64 `json:"gbps"`
	MsgRate  float64 `json:"msg_rate"` // messages per second
	Bytes    int64   `json:"bytes"`
	Duration float64 `json:"duration_s"`
}
