// Package pathtrace finds the hops a RoCE v2 flow takes through a routed
// fabric: a Paris-style traceroute that sends UDP datagrams with the flow's
// exact 5-tuple (its source and destination IPs, its source port,
// destination port 4791) and TTL 1, 2, 3 …, and names each hop by the ICMP
// time-exceeded it answers. Switches hash the 5-tuple for ECMP, never the
// TTL, so every probe of a trace follows the flow's own path.
//
// The probes leave from an ordinary UDP socket bound to the flow's source
// and read their ICMP answers from the socket's error queue (IP_RECVERR):
// no raw socket, no capability, and it works from a pod's network
// namespace. A hop that does not answer is unknown and says why; nothing
// is guessed. README.md has the privileges, the limits and the reasons.
package pathtrace

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// RoCEPort is RoCE v2's UDP destination port, a flow's default.
const RoCEPort = 4791

// Flow is what ECMP hashes: the 5-tuple of a RoCE v2 flow (the protocol is
// always UDP).
type Flow struct {
	Src     netip.Addr `json:"src_ip"`
	Dst     netip.Addr `json:"dst_ip"`
	SrcPort uint16     `json:"src_port"`           // 0: the kernel picks one, the same for every probe of the trace
	DstPort uint16     `json:"dst_port,omitempty"` // 0: RoCEPort
}

// normal is f with IPv4-mapped addresses (a RoCE v2 GID of an IPv4
// address is one) as IPv4 and the default destination port filled in, so
// equal flows are equal keys.
func (f Flow) normal() Flow {
	f.Src, f.Dst = f.Src.Unmap(), f.Dst.Unmap()
	if f.DstPort == 0 {
		f.DstPort = RoCEPort
	}
	return f
}

// Validate says what makes f untraceable, naming the field and the fix.
func (f Flow) Validate() error {
	f = f.normal()
	for _, a := range []struct {
		field string
		ip    netip.Addr
	}{{"src_ip", f.Src}, {"dst_ip", f.Dst}} {
		switch {
		case !a.ip.IsValid():
			return fmt.Errorf("flow %s is empty: give the IP address of the flow's GID on that side", a.field)
		case a.ip.Zone() != "" || a.ip.IsLinkLocalUnicast():
			return fmt.Errorf("flow %s %s is link-local: it is not routed, so it has no hops to trace; use the port's routable GID", a.field, a.ip)
		case a.ip.IsUnspecified() || a.ip.IsMulticast():
			return fmt.Errorf("flow %s %s is not a unicast address: give the IP address of the flow's GID", a.field, a.ip)
		}
	}
	if f.Src.Is4() != f.Dst.Is4() {
		return fmt.Errorf("flow src_ip %s and dst_ip %s are of different families: a flow is IPv4 or IPv6 end to end", f.Src, f.Dst)
	}
	return nil
}

func (f Flow) String() string {
	f = f.normal()
	return fmt.Sprintf("%s → %s udp", netip.AddrPortFrom(f.Src, f.SrcPort), netip.AddrPortFrom(f.Dst, f.DstPort))
}

// Hop is what one TTL found.
type Hop struct {
	TTL int `json:"ttl"`
	// Addr is who answered; the zero Addr when nobody did (Reason says why).
	Addr netip.Addr `json:"addr,omitzero"`
	// Answer is what it answered: "time exceeded" from a router on the
	// way, "port unreachable" or "udp reply" from the destination, or the
	// destination-unreachable code that stopped the trace.
	Answer string        `json:"answer,omitempty"`
	RTT    time.Duration `json:"rtt_ns,omitempty"`
	Probes int           `json:"probes"` // datagrams sent at this TTL; more than one when the first went unanswered
	Reason string        `json:"reason,omitempty"`
}

// Known says whether the hop answered.
func (h Hop) Known() bool { return h.Addr.IsValid() }

// Path is a flow's hops, TTL 1 first.
type Path struct {
	Flow Flow  `json:"flow"` // as traced: the source port the kernel picked when it was 0
	Hops []Hop `json:"hops"`
	// Reached: the destination answered (a UDP reply or its port
	// unreachable), or the last hop is the destination's address.
	Reached bool `json:"reached"`
	// Complete: every hop in Hops is known and the trace ended at the
	// destination or in the silence after the last hop (a RoCE endpoint
	// drops the probes), not at MaxTTL, a time bound or an unreachable.
	Complete bool      `json:"complete"`
	Why      string    `json:"why"` // how the trace ended, in words
	At       time.Time `json:"at"`  // when it ended; a cached path keeps it
	// Loss is the hops' answers to repeated probes (MeasureLoss), when
	// they were asked for.
	Loss []HopCount `json:"loss,omitempty"`
}

// String is the path on one line, for logs: "1 10.0.1.1 | 2 ? | 3 …".
func (p Path) String() string {
	var b strings.Builder
	for i, h := range p.Hops {
		if i > 0 {
			b.WriteString(" | ")
		}
		if h.Known() {
			fmt.Fprintf(&b, "%d %s", h.TTL, h.Addr)
		} else {
			fmt.Fprintf(&b, "%d ?", h.TTL)
		}
	}
	return b.String()
}

// Defaults of Options. DefaultPacing keeps a process at 20 probes a second:
// switches answer TTL expiry from their CPU through an ICMP policer, and
// Linux-based ones (SONiC, Cumulus) send one ICMP a second to a host after
// a burst of six by default (net.ipv4.icmp_ratelimit).
const (
	DefaultMaxTTL       = 16
	DefaultTimeout      = 500 * time.Millisecond
	DefaultProbesPerTTL = 2
	DefaultPacing       = 50 * time.Millisecond
	DefaultMaxSilent    = 3
	DefaultBudget       = 30 * time.Second
)

// Options bound a trace. The zero value takes every default.
type Options struct {
	MaxTTL       int           // the highest TTL probed (1..255)
	Timeout      time.Duration // how long one probe waits for its answer
	ProbesPerTTL int           // probes at a TTL before its hop is unknown
	// Pacing is the least time between two probes of this process: every
	// trace of the process with the same Pacing takes turns on one token
	// bucket, however many run at once.
	Pacing time.Duration
	// MaxSilent unknown hops in a row end the trace: past the last hop that
	// answered, the probes reach a destination that drops them.
	MaxSilent int
	Budget    time.Duration // the whole trace's bound
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.MaxTTL, DefaultMaxTTL)
	def(&o.ProbesPerTTL, DefaultProbesPerTTL)
	def(&o.MaxSilent, DefaultMaxSilent)
	defD(&o.Timeout, DefaultTimeout)
	defD(&o.Pacing, DefaultPacing)
	defD(&o.Budget, DefaultBudget)
	return o
}

// Validate names the first option out of range and its range (zero is
// the default and always valid).
func (o Options) Validate() error {
	o = o.withDefaults()
	switch {
	case o.MaxTTL < 1 || o.MaxTTL > 255:
		return fmt.Errorf("pathtrace: Options.MaxTTL %d: want 1..255 (0 = %d)", o.MaxTTL, DefaultMaxTTL)
	case o.ProbesPerTTL < 1 || o.ProbesPerTTL > 10:
		return fmt.Errorf("pathtrace: Options.ProbesPerTTL %d: want 1..10 (0 = %d)", o.ProbesPerTTL, DefaultProbesPerTTL)
	case o.MaxSilent < 1 || o.MaxSilent > o.MaxTTL:
		return fmt.Errorf("pathtrace: Options.MaxSilent %d: want 1..MaxTTL (0 = %d)", o.MaxSilent, DefaultMaxSilent)
	case o.Timeout < time.Millisecond:
		return fmt.Errorf("pathtrace: Options.Timeout %v: want at least 1ms (0 = %v)", o.Timeout, DefaultTimeout)
	case o.Pacing < 0:
		return fmt.Errorf("pathtrace: Options.Pacing %v: want a positive interval (0 = %v)", o.Pacing, DefaultPacing)
	case o.Budget < o.Timeout:
		return fmt.Errorf("pathtrace: Options.Budget %v is shorter than one probe's Timeout %v: raise Budget (0 = %v)", o.Budget, o.Timeout, DefaultBudget)
	}
	return nil
}
