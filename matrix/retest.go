package matrix

import (
	"fmt"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Retests confirm a verdict before it is given (ClusterKit style): a
// measurement is judged on its best attempt, so a pair that was slow once
// because of noise is cleared, and one that is slow every time is
// confirmed. Failures are different: a link that drops a test even once is
// a link NCCL will hit, so a fabric failure sticks however many retests
// pass. Only failures that say nothing about the fabric (a pair deadline,
// a lost peer, a local error) are superseded by retests that all measured.

// transient reports whether a failure of this class may be a hiccup of the
// test infrastructure rather than of the path.
func transient(c probe.Class) bool {
	return c == probe.ClassTimeout || c == probe.ClassPeerLost || c == probe.ClassInternal
}

// resolveAttempts folds c.Retests into the fields the verdict is judged on
// and returns a note for the reason ("" without retests). c keeps its
// Retests so an operator can see every attempt.
func resolveAttempts(c *Cell) string {
	if len(c.Retests) == 0 {
		return ""
	}
	n := 1 + len(c.Retests)
	fails, lastFail := 0, -1 // -1: the first measurement
	if c.Class.Failed() {
		fails = 1
	}
	allLaterOK := true
	for i := range c.Retests {
		a := &c.Retests[i]
		cls := a.Class
		if cls == "" && a.Error != nil {
			cls = a.Error.Class
		}
		if cls == "" || cls.Failed() {
			fails++
			lastFail = i
			allLaterOK = false
		}
	}
	switch {
	case fails == 0:
		bestOf(c)
		return fmt.Sprintf("best of %d attempts", n)
	case fails == n:
		return fmt.Sprintf("failed all %d attempts", n)
	case c.Class.Failed() && fails == 1 && allLaterOK && transient(c.Class):
		first := c.Class
		c.Class, c.Error = probe.ClassOK, nil
		c.Latency, c.Bandwidth, c.LatencyCodes = nil, nil, nil
		bestOf(c)
		return fmt.Sprintf("first attempt %s, then %d retests measured", first, n-1)
	default:
		if lastFail >= 0 && !c.Class.Failed() {
			a := c.Retests[lastFail]
			c.Class, c.Error = a.Class, a.Error
			if c.Class == "" && a.Error != nil {
				c.Class = a.Error.Class
			}
			if c.Class == "" {
				c.Class = probe.ClassInternal
			}
		}
		return fmt.Sprintf("intermittent: failed %d of %d attempts", fails, n)
	}
}

// bestOf sets the cell's latency to the attempt with the lowest p50 and its
// bandwidth to the one with the highest Gb/s, among attempts that measured.
func bestOf(c *Cell) {
	for i := range c.Retests {
		a := &c.Retests[i]
		if a.Class.Failed() && a.Class != "" {
			continue
		}
		if a.Latency != nil && a.Latency.P50Ns > 0 && (c.Latency == nil || !(c.Latency.P50Ns > 0) || a.Latency.P50Ns < c.Latency.P50Ns) {
			c.Latency, c.LatencyCodes = a.Latency, nil
		}
		if a.Bandwidth != nil && (c.Bandwidth == nil || a.Bandwidth.Gbps > c.Bandwidth.Gbps) {
			c.Bandwidth = a.Bandwidth
		}
	}
	if c.Class == "" && (c.Latency != nil || c.Bandwidth != nil) {
		c.Class = probe.ClassOK
	}
}

// RetestWorthy reports whether a judged cell should be measured again
// before the sweep's verdict is final: performance outliers (noise clears
// them) and failures that could be transient or intermittent. Failures
// known before any packet flowed, deterministic ones (MTU) (port down, wrong GID, no netdev, memlock,
// skipped) and lost peers would fail the same way again.
func RetestWorthy(r *Result) bool {
	switch r.Verdict {
	case VerdictSlowLatency, VerdictLowBandwidth:
		return true
	case VerdictFailed:
		switch r.Class {
		case probe.ClassRetryExceeded, probe.ClassTimeout, probe.ClassInternal:
			return true
		}
	}
	return false
}
