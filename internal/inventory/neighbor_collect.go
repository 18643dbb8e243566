package inventory

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/lldp"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// Where a NeighborCollector reads neighbours from.
const (
	NeighborsFromFrames = "frames" // LLDP frames on each netdev (CAP_NET_RAW)
	NeighborsFromLLDPD  = "lldpd"  // a running lldpd, through lldpcli
	NeighborsAuto       = "auto"   // lldpd when it answers, else frames
)

// DoctorLLDPWait is doctor's default bound on waiting for frames: switches
// announce about every 30 s, so a port heard nothing in 35 s only if its
// switch sends nothing.
const DoctorLLDPWait = 35 * time.Second

// lldpcliTimeout bounds one question to lldpd: it answers from memory.
const lldpcliTimeout = 10 * time.Second

// NeighborOptions configures a NeighborCollector.
type NeighborOptions struct {
	// Source is NeighborsFromFrames, NeighborsFromLLDPD or NeighborsAuto.
	Source string
	// Wait bounds how long a lookup waits for frames on netdevs that
	// have heard none. Doctor waits; a worker must not (0), and reports
	// what is known so far: "listening since ...".
	Wait time.Duration
	// LLDPD says how to reach lldpd.
	LLDPD lldp.LLDPD
	// Watch configures the frame listeners (tests open them in another
	// network namespace).
	Watch lldp.WatchOptions
	// OnWait, when set, is told before a lookup waits for frames, so a
	// command can say why it pauses.
	OnWait func(netdevs []string, wait time.Duration)
}

// NeighborCollector finds ports' switch neighbours for LookupNeighbors
// (its Lookup method). Frame listeners start at the first lookup that
// reads frames and keep listening in the background, so later lookups
// see what arrived in between; whoever creates the collector owns them
// and stops them with Close.
type NeighborCollector struct {
	opts   NeighborOptions
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	watcher *lldp.Watcher
	closed  bool
}

// NewNeighborCollector checks the options and returns a collector that
// listens on nothing yet. ctx bounds every wait and lldpd question.
func NewNeighborCollector(ctx context.Context, o NeighborOptions) (*NeighborCollector, error) {
	if err := CheckNeighborSource(o.Source); err != nil {
		return nil, err
	}
	if o.Wait < 0 {
		return nil, fmt.Errorf("LLDP wait %s: want 0 (do not wait) or more", o.Wait)
	}
	c := &NeighborCollector{opts: o}
	c.ctx, c.cancel = context.WithCancel(ctx)
	return c, nil
}

// CheckNeighborSource refuses a source other than frames, lldpd or auto.
func CheckNeighborSource(s string) error {
	switch s {
	case NeighborsFromFrames, NeighborsFromLLDPD, NeighborsAuto:
		return nil
	}
	return fmt.Errorf("LLDP source %q: want %s, %s or %s", s, NeighborsFromFrames, NeighborsFromLLDPD, NeighborsAuto)
}

// Close stops the frame listeners and waits for them to end.
func (c *NeighborCollector) Close() {
	c.cancel()
	c.mu.Lock()
	w := c.watcher
	c.closed = true
	c.mu.Unlock()
	if w != nil {
		w.Close()
	}
}

// Lookup answers for netdevs from lldpd or from frames, as configured.
// With auto, lldpd's failure (not running, not installed) is why frames
// are read, and the answer says so.
func (c *NeighborCollector) Lookup(netdevs []string) NeighborTable {
	t := NeighborTable{ByNetdev: make(map[string]probe.Neighbor, len(netdevs))}
	if len(netdevs) == 0 {
		t.About = "no Ethernet port: LLDP not read"
		return t
	}
	var lldpdErr error
	if c.opts.Source != NeighborsFromFrames {
		ctx, cancel := context.WithTimeout(c.ctx, lldpcliTimeout)
		heard, err := c.opts.LLDPD.Neighbors(ctx)
		cancel()
		if err == nil || c.opts.Source == NeighborsFromLLDPD {
			t.About = "lldpd"
			for _, nd := range netdevs {
				if err != nil {
					t.ByNetdev[nd] = unknownNeighbor(nd, lldp.SourceLLDPD, err)
				} else {
					t.ByNetdev[nd] = fromLLDPD(nd, heard[nd])
				}
			}
			return t
		}
		lldpdErr = err
	}
	c.fromFrames(netdevs, &t)
	if lldpdErr != nil {
		t.About += "; not lldpd: " + lldpdErr.Error()
	}
	return t
}

func (c *NeighborCollector) fromFrames(netdevs []string, t *NeighborTable) {
	t.Frames = true
	t.About = "LLDP frames"
	w, err := c.watch()
	if err != nil {
		for _, nd := range netdevs {
			t.ByNetdev[nd] = unknownNeighbor(nd, lldp.SourceFrame, err)
		}
		return
	}
	if c.opts.Wait > 0 && len(netdevs) > 0 {
		t.About = fmt.Sprintf("LLDP frames, waited up to %s", c.opts.Wait)
		if c.opts.OnWait != nil {
			c.opts.OnWait(netdevs, c.opts.Wait)
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.opts.Wait)
		w.Wait(ctx, netdevs...)
		cancel()
	}
	now := time.Now()
	for _, nd := range netdevs {
		n, err := w.Neighbor(nd)
		var nh *lldp.NotHeardError
		if errors.As(err, &nh) && c.opts.Wait > 0 {
			nh.For = now.Sub(nh.Since)
		}
		if err != nil {
			t.ByNetdev[nd] = unknownNeighbor(nd, lldp.SourceFrame, err)
		} else {
			t.ByNetdev[nd] = neighborOf(n)
		}
	}
}

func (c *NeighborCollector) watch() (*lldp.Watcher, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, lldp.ErrClosed
	}
	if c.watcher == nil {
		c.watcher = lldp.NewWatcher(c.opts.Watch)
	}
	return c.watcher, nil
}
