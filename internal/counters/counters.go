// Package counters reads an RDMA port's error and congestion counters from
// sysfs and turns what changed while a test ran into evidence a verdict can
// name: packets lost and retransmitted, receiver-not-ready, a physical
// layer corrupting frames, a link that went down, congestion notifications.
//
// A test that only reports "slow" or "retry exceeded" cannot say why; the
// HCA has been counting the reason all along. ib_core exposes two sets per
// port: ports/N/counters (the InfiniBand PMA set every IB and mlx5 RoCE port
// has) and ports/N/hw_counters (the driver's own: mlx5's out_of_sequence,
// local_ack_timeout_err, np_cnp_sent…, rxe's out_of_seq_request,
// completer_retry_err…). Only counters in the table below are read: a
// known meaning is what makes a delta evidence. Everything is read through
// an fs.FS rooted at "/", like package inventory, so captured trees test it.
//
// Cumulative values mean little (they count since the driver loaded); the
// delta over one test, or one round, is what explains a cell.
package counters

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Kind is what a counter is evidence of.
type Kind uint8

const (
	// Loss: out-of-sequence packets, sequence NAKs, duplicates. Packets
	// went missing on the path and the transport recovered them.
	Loss Kind = iota
	// Timeout: the requester waited for an ACK in vain and retransmitted,
	// or gave up (retry exceeded). Loss too, seen from the sender.
	Timeout
	// RNR: the receiver had no receive buffer posted.
	RNR
	// Physical: symbol and receive errors, link integrity: the cable,
	// optics or the port's SerDes corrupt frames.
	Physical
	// LinkDown: the link went down or retrained.
	LinkDown
	// Congestion: CNPs sent or handled, ECN-marked packets, transmit wait.
	Congestion
	// Discard: packets dropped for lack of buffers or credits.
	Discard
	// NumKinds is the number of kinds (an array bound).
	NumKinds
)

var kindNames = [NumKinds]string{"loss", "timeout", "rnr", "physical", "link-down", "congestion", "discard"}

func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Side is where on this port a counter observes its event.
type Side uint8

const (
	// Ingress: the port received something wrong (out of order, corrupt,
	// ECN-marked): the path *into* this port.
	Ingress Side = iota
	// Egress: the port's own sends were lost, timed out, throttled or
	// discarded: the path *out of* this port.
	Egress
	// Either: the counter cannot tell (a duplicate request is a lost
	// request retransmitted or a lost ACK).
	Either
)

func (s Side) String() string {
	switch s {
	case Ingress:
		return "ingress"
	case Egress:
		return "egress"
	default:
		return "either"
	}
}

// Def is one counter the package knows.
type Def struct {
	Name string
	Dir  string // "counters" (PMA) or "hw_counters" (driver)
	Kind Kind
	Side Side
}

// Known is every counter read, PMA set first. The names are the kernel's
// (ib_core's PMA attributes, mlx5_ib's and rdma_rxe's hw_counters).
var Known = []Def{
	{"symbol_error", "counters", Physical, Ingress},
	{"port_rcv_errors", "counters", Physical, Ingress},
	{"port_rcv_remote_physical_errors", "counters", Physical, Ingress},
	{"local_link_integrity_errors", "counters", Physical, Ingress},
	{"link_error_recovery", "counters", LinkDown, Either},
	{"link_downed", "counters", LinkDown, Either},
	{"excessive_buffer_overrun_errors", "counters", Discard, Ingress},
	{"port_rcv_switch_relay_errors", "counters", Discard, Ingress},
	{"port_rcv_constraint_errors", "counters", Discard, Ingress},
	{"port_xmit_discards", "counters", Discard, Egress},
	{"port_xmit_constraint_errors", "counters", Discard, Egress},
	{"port_xmit_wait", "counters", Congestion, Egress},

	// mlx5_ib
	{"out_of_sequence", "hw_counters", Loss, Ingress},
	{"packet_seq_err", "hw_counters", Loss, Egress},
	{"implied_nak_seq_err", "hw_counters", Loss, Ingress},
	{"duplicate_request", "hw_counters", Loss, Either},
	{"local_ack_timeout_err", "hw_counters", Timeout, Egress},
	{"roce_adp_retrans", "hw_counters", Timeout, Egress},
	{"roce_adp_retrans_to", "hw_counters", Timeout, Egress},
	{"roce_slow_restart", "hw_counters", Timeout, Egress},
	{"rnr_nak_retry_err", "hw_counters", RNR, Egress},
	{"out_of_buffer", "hw_counters", Discard, Ingress},
	{"np_cnp_sent", "hw_counters", Congestion, Ingress},
	{"np_ecn_marked_roce_packets", "hw_counters", Congestion, Ingress},
	{"rp_cnp_handled", "hw_counters", Congestion, Egress},

	// rdma_rxe (Soft-RoCE; the lab's HCA)
	{"out_of_seq_request", "hw_counters", Loss, Ingress},
	{"rcvd_seq_err", "hw_counters", Loss, Egress},
	{"completer_retry_err", "hw_counters", Timeout, Egress},
	{"retry_exceeded_err", "hw_counters", Timeout, Egress},
	{"rcvd_rnr_err", "hw_counters", RNR, Egress},
	{"send_rnr_err", "hw_counters", RNR, Ingress},
	{"retry_rnr_exceeded_err", "hw_counters", RNR, Egress},
	{"send_err", "hw_counters", Discard, Egress},
	{"link_downed", "hw_counters", LinkDown, Either},
}

// Value is one counter's reading (or delta).
type Value struct {
	Def
	N uint64
}

// Snapshot is one port's known counters at one moment, in Known's order;
// counters the port does not have are absent.
type Snapshot struct {
	Device string
	Port   int
	Values []Value
}

// ErrNoCounters means the port exposes none of the known counters (an old
// kernel, a driver without hw_counters, a container without sysfs).
var ErrNoCounters = errors.New("no known counters under ports/N/counters or hw_counters")

// Read takes a snapshot of device's port num from fsys (rooted at "/").
// A counter that exists but cannot be parsed is an error naming it: a
// silent zero would hide the very evidence this package is for.
func Read(fsys fs.FS, device string, num int) (Snapshot, error) {
	s := Snapshot{Device: device, Port: num}
	base := path.Join("sys/class/infiniband", device, "ports", strconv.Itoa(num))
	for _, d := range Known {
		b, err := fs.ReadFile(fsys, path.Join(base, d.Dir, d.Name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return s, fmt.Errorf("%s/%d %s/%s: %w", device, num, d.Dir, d.Name, err)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return s, fmt.Errorf("%s/%d %s/%s: not a counter value: %q", device, num, d.Dir, d.Name, strings.TrimSpace(string(b)))
		}
		s.Values = append(s.Values, Value{Def: d, N: n})
	}
	if len(s.Values) == 0 {
		return s, fmt.Errorf("%s/%d: %w", device, num, ErrNoCounters)
	}
	return s, nil
}

// NonZero is the snapshot's counters with a value, for doctor.
func (s Snapshot) NonZero() []Value {
	var out []Value
	for _, v := range s.Values {
		if v.N != 0 {
			out = append(out, v)
		}
	}
	return out
}

// FS reads snapshots from a tree rooted at "/" (os.DirFS("/") on a host):
// the worker's counter reader for the verbs engine.
type FS struct{ Root fs.FS }

func (f FS) Counters(device string, port int) (Snapshot, error) { return Read(f.Root, device, port) }
