package lldp

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// firmwareHint is why a port may hear no LLDP although its switch sends it.
const firmwareHint = "the switch may not send LLDP on that port, or the NIC's firmware LLDP agent consumes the frames " +
	"before the host sees them (ConnectX: the firmware's LLDP/DCBX settings, mlxconfig; Intel i40e/ice: " +
	"ethtool --set-priv-flags %s disable-fw-lldp on)"

// NotHeardError is an interface with no LLDP announcement (yet).
type NotHeardError struct {
	Interface string
	Since     time.Time     // listening since; zero when the source keeps no such time (lldpd)
	For       time.Duration // how long it was waited for; 0 while listening goes on
	Source    string        // SourceFrame or SourceLLDPD
	// Malformed is the last frame on the interface that was not a valid
	// LLDPDU, if any: a switch may be sending something this cannot read.
	Malformed *MalformedError
}

func (e *NotHeardError) Error() string {
	var s string
	hint := fmt.Sprintf(firmwareHint, e.Interface)
	switch {
	case e.Source == SourceLLDPD:
		s = fmt.Sprintf("lldpd has heard no LLDP on %s: %s; or lldpd does not listen there (lldpcli show interfaces)", e.Interface, hint)
	case e.For > 0:
		s = fmt.Sprintf("no LLDP frame on %s in %s: %s", e.Interface, e.For.Round(time.Second), hint)
	case !e.Since.IsZero():
		s = fmt.Sprintf("no LLDP frame on %s yet (listening since %s; switches announce about every 30 s); if none comes, %s",
			e.Interface, e.Since.UTC().Format(time.RFC3339), hint)
	default:
		s = fmt.Sprintf("no LLDP frame on %s: %s", e.Interface, hint)
	}
	if e.Malformed != nil {
		s += "; the last frame that was not a valid LLDPDU: " + e.Malformed.Error()
	}
	return s
}

// ExpiredError is a neighbour that stopped announcing itself: its TTL ran
// out, or it sent a shutdown LLDPDU (TTL 0).
type ExpiredError struct {
	Last     Neighbor
	Shutdown bool
}

func (e *ExpiredError) Error() string {
	at := e.Last.Seen.UTC().Format(time.RFC3339)
	if e.Shutdown {
		return fmt.Sprintf("the LLDP neighbour on %s (%s) announced its shutdown at %s: its LLDP agent stopped or its port went down",
			e.Last.Interface, e.Last.Label(), at)
	}
	return fmt.Sprintf("the LLDP neighbour on %s (%s) expired: nothing since %s and its TTL was %s (the switch stopped sending, or the cable moved)",
		e.Last.Interface, e.Last.Label(), at, e.Last.TTL)
}

// AmbiguousError is an interface that hears several LLDP agents. A switch
// port is one agent; several mean a hub, an unmanaged switch or a bridge
// forwards LLDP between the NIC and the switch, so none of them is taken.
type AmbiguousError struct {
	Interface string
	Neighbors []Neighbor
}

func (e *AmbiguousError) Error() string {
	labels := make([]string, len(e.Neighbors))
	for i, n := range e.Neighbors {
		labels[i] = n.Label()
	}
	slices.Sort(labels)
	return fmt.Sprintf("%d LLDP neighbours on %s (%s): something between the NIC and the switch forwards LLDP (a hub, an unmanaged switch, a bridge); not choosing one",
		len(e.Neighbors), e.Interface, strings.Join(labels, "; "))
}

// MalformedError is a frame received on an interface that is not a valid
// LLDPDU.
type MalformedError struct {
	Interface string
	From      string // the sender's MAC, when the Ethernet header was whole
	Err       error
}

func (e *MalformedError) Error() string {
	from := ""
	if e.From != "" {
		from = " from " + e.From
	}
	return fmt.Sprintf("malformed LLDP frame on %s%s: %v", e.Interface, from, e.Err)
}

func (e *MalformedError) Unwrap() error { return e.Err }

// PermissionError is a listener this process may not open.
type PermissionError struct {
	Interface string
	Err       error
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("needs CAP_NET_RAW to read LLDP frames on %s (%v): run as root, or grant it (setcap cap_net_raw+ep on the binary; "+
		"AmbientCapabilities=CAP_NET_RAW in a systemd unit; capabilities.add: [NET_RAW] in Kubernetes), or ask lldpd instead", e.Interface, e.Err)
}

func (e *PermissionError) Unwrap() error { return e.Err }

// ErrClosed is a question to a Watcher that was closed.
var ErrClosed = errors.New("lldp: watcher closed")
