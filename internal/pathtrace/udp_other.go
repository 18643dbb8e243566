//go:build !linux

package pathtrace

import (
	"context"
	"errors"
)

// openProber refuses: the probes' answers arrive on a Linux socket error
// queue (IP_RECVERR), which other kernels do not have.
func openProber(context.Context, Flow) (prober, Flow, error) {
	return nil, Flow{}, errors.New("pathtrace: tracing needs Linux (its UDP sockets' error queues carry the hops' ICMP answers): trace from the worker on the node")
}
