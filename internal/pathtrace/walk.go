package pathtrace

import (
	"context"
	"fmt"
	"net/netip"
	"time"
)

// kind is what an answer to a probe was.
type kind int

const (
	timeExceeded    kind = iota + 1 // a router on the way
	portUnreachable                 // the destination's kernel: nothing listens there
	reply                           // a datagram back from the destination
	unreachable                     // any other destination unreachable, or another ICMP error
)

// answer is what one probe provoked.
type answer struct {
	kind kind
	from netip.Addr
	text string // Hop.Answer
	rtt  time.Duration
}

// prober sends one probe of a trace at a time; the socket implementation is
// per platform, and the tests fake it.
type prober interface {
	// probe sends one datagram at ttl and waits up to timeout for what it
	// provokes; ok is false when nothing came. err is a local failure or the
	// trace's context ending (its cause).
	probe(ttl int, timeout time.Duration) (a answer, ok bool, err error)
	close()
}

// Trace traces f from this network namespace (the calling thread's: a
// caller that entered another with setns gets that one's path). Errors are
// the flow's or the options' faults and local failures (the source port in
// use, the source not an address here); whatever the network does is in
// the Path.
func Trace(ctx context.Context, f Flow, o Options) (Path, error) {
	f = f.normal()
	if err := f.Validate(); err != nil {
		return Path{Flow: f}, fmt.Errorf("pathtrace: %w", err)
	}
	if err := o.Validate(); err != nil {
		return Path{Flow: f}, err
	}
	o = o.withDefaults()
	ctx, cancel := context.WithTimeoutCause(ctx, o.Budget, fmt.Errorf("the trace's time bound (Budget %v) ran out", o.Budget))
	defer cancel()
	p, traced, err := openProber(ctx, f)
	if err != nil {
		return Path{Flow: f}, err
	}
	defer p.close()
	return walk(ctx, p, traced, o, pacerFor(o.Pacing))
}

// walk probes TTL 1, 2, … until the destination answers, a router says it
// cannot be reached, MaxSilent hops in a row stay silent, MaxTTL or ctx
// (the path so far, and why). An error is a local failure: no path.
func walk(ctx context.Context, p prober, f Flow, o Options, pace *pacer) (Path, error) {
	path := Path{Flow: f}
	silent, lastKnown := 0, 0
	for ttl := 1; ttl <= o.MaxTTL && path.Why == ""; ttl++ {
		hop, a, err := probeHop(ctx, p, ttl, o, pace)
		if hop.Probes > 0 {
			path.Hops = append(path.Hops, hop)
		}
		switch {
		case err != nil && ctx.Err() == nil:
			return Path{Flow: f}, err
		case err != nil:
			path.Why = fmt.Sprintf("stopped at TTL %d: %v", ttl, err)
		case !hop.Known():
			if silent++; silent >= o.MaxSilent {
				silence(&path, lastKnown, ttl)
			}
		case a.kind == timeExceeded && a.from != f.Dst:
			silent, lastKnown = 0, ttl
		default:
			end(&path, hop, a)
		}
	}
	switch {
	case path.Why != "":
	case silent > 0:
		path.Why = fmt.Sprintf("TTL too small: the destination was not reached within MaxTTL %d, and the last %d hop(s) did not answer (raise MaxTTL)", o.MaxTTL, silent)
	default:
		path.Why = fmt.Sprintf("TTL too small: the destination was not reached within MaxTTL %d: hop %d is still a router (raise MaxTTL)", o.MaxTTL, o.MaxTTL)
	}
	path.At = time.Now()
	return path, nil
}

// probeHop sends up to ProbesPerTTL probes at ttl, each after its turn at
// the pacer, and stops at the first answer.
func probeHop(ctx context.Context, p prober, ttl int, o Options, pace *pacer) (Hop, answer, error) {
	hop := Hop{TTL: ttl}
	for hop.Probes < o.ProbesPerTTL {
		if err := pace.wait(ctx); err != nil {
			return unanswered(hop, err), answer{}, context.Cause(ctx)
		}
		a, ok, err := p.probe(ttl, o.Timeout)
		hop.Probes++
		if err != nil {
			return unanswered(hop, err), answer{}, err
		}
		if ok {
			hop.Addr, hop.Answer, hop.RTT = a.from, a.text, a.rtt
			return hop, a, nil
		}
	}
	hop.Reason = fmt.Sprintf("no ICMP answer to %d probe(s) within %v each (ICMP filtered or rate-limited at this hop)", hop.Probes, o.Timeout)
	return hop, answer{}, nil
}

func unanswered(h Hop, err error) Hop {
	h.Reason = fmt.Sprintf("the trace ended before this hop answered: %v", err)
	return h
}

// end records an answer that ends the trace: the destination's, or a
// router's unreachable.
func end(path *Path, hop Hop, a answer) {
	f := path.Flow
	if a.from != f.Dst {
		path.Why = fmt.Sprintf("%s at TTL %d answered %s: the destination cannot be reached past it", a.from, hop.TTL, a.text)
		return
	}
	path.Reached = true
	path.Complete = allKnown(path.Hops)
	switch a.kind {
	case portUnreachable:
		path.Why = fmt.Sprintf("the destination answered port unreachable at TTL %d: its kernel took the datagram, so no RoCE device listens on %s", hop.TTL, f.Dst)
	case reply:
		path.Why = fmt.Sprintf("the destination answered at TTL %d", hop.TTL)
	default:
		path.Why = fmt.Sprintf("the destination %s answered %s at TTL %d", f.Dst, a.text, hop.TTL)
	}
}

// silence ends a trace whose last MaxSilent hops (up to ttl) said nothing.
// Past a hop that answered, they are the destination dropping the probes
// (or hops that filter ICMP, which no probe can tell apart): they are not
// hops of the path, so they leave Hops.
func silence(path *Path, lastKnown, ttl int) {
	if lastKnown == 0 {
		path.Why = fmt.Sprintf("no hop answered from TTL 1 to %d: ICMP is filtered or rate-limited near %s, or ICMP errors do not reach this network namespace", ttl, path.Flow.Src)
		return
	}
	last := path.Hops[lastKnown-1]
	path.Hops = path.Hops[:lastKnown]
	path.Complete = allKnown(path.Hops)
	dest := "the destination did not answer"
	if path.Flow.DstPort == RoCEPort {
		dest += " (RoCE endpoints drop non-RDMA datagrams to 4791)"
	}
	path.Why = fmt.Sprintf("%s: TTL %d to %d were silent after %s at TTL %d (or the hops from TTL %d on filter or rate-limit ICMP)",
		dest, lastKnown+1, ttl, last.Addr, lastKnown, lastKnown+1)
}

func allKnown(hops []Hop) bool {
	for _, h := range hops {
		if !h.Known() {
			return false
		}
	}
	return true
}
