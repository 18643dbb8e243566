package member

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
)

// Options choose how a process joins gossip.
type Options struct {
	Name      string
	Bind      string // host:port; port 0 picks a free one
	Advertise string // host:port; empty = the bound address
	LAN       bool   // false: timers for a single host (demo, tests)
	WAN       bool   // with LAN: memberlist's WAN timers, for hosts that stall
	Delegate  memberlist.Delegate
	Events    memberlist.EventDelegate
	Logger    *slog.Logger
	Transport memberlist.Transport // tests: a MockNetwork transport
	Key       []byte               // AES key for gossip encryption; empty = plaintext
	// Tune, when set, adjusts the finished config last (the scale harness
	// relaxes the timers of a thousand simulated workers sharing one host).
	Tune func(*memberlist.Config)
}

// Config builds a memberlist config from Options.
func Config(o Options) (*memberlist.Config, error) {
	c := memberlist.DefaultLocalConfig()
	// On one host a missed broadcast would otherwise wait for the 15 s
	// push/pull to heal; full-state syncs are cheap on loopback.
	c.PushPullInterval = 2 * time.Second
	switch {
	case o.LAN && o.WAN:
		c = memberlist.DefaultWANConfig()
	case o.LAN:
		c = memberlist.DefaultLANConfig()
	}
	c.Name = o.Name
	if o.Transport != nil {
		c.Transport = o.Transport
	} else {
		host, port, err := splitHostPort(o.Bind)
		if err != nil {
			return nil, fmt.Errorf("gossip bind: %w", err)
		}
		c.BindAddr, c.BindPort = host, port
		c.AdvertisePort = port
		if o.Advertise != "" {
			host, port, err := splitHostPort(o.Advertise)
			if err != nil {
				return nil, fmt.Errorf("gossip advertise: %w", err)
			}
			if host, err = resolveAdvertise(host); err != nil {
				return nil, err
			}
			c.AdvertiseAddr, c.AdvertisePort = host, port
		}
	}
	if len(o.Key) > 0 {
		switch len(o.Key) {
		case 16, 24, 32:
		default:
			return nil, fmt.Errorf("gossip key is %d bytes: it must be 16, 24 or 32 (AES-128/192/256)", len(o.Key))
		}
		c.SecretKey = o.Key
		// Refuse plaintext peers: a node without the key must not join.
		c.GossipVerifyIncoming, c.GossipVerifyOutgoing = true, true
	}
	c.Delegate = o.Delegate
	c.Events = o.Events
	c.LogOutput = io.Discard
	if o.Logger != nil {
		c.LogOutput = nil
		// memberlist is chatty, mostly about probes that succeeded: debug.
		c.Logger = log.New(LogWriter(o.Logger.With("component", "memberlist"), slog.LevelDebug), "", 0)
	}
	if o.Tune != nil {
		o.Tune(c)
	}
	return c, nil
}

func splitHostPort(addr string) (string, int, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: %w", ps, err)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}

// LogWriter carries a hashicorp library's log lines (memberlist, raft) into
// slog at one level.
func LogWriter(l *slog.Logger, level slog.Level) io.Writer { return logWriter{l, level} }

type logWriter struct {
	l     *slog.Logger
	level slog.Level
}

func (w logWriter) Write(p []byte) (int, error) {
	w.l.Log(context.Background(), w.level, string(trimNL(p)))
	return len(p), nil
}

func trimNL(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}

// resolveAdvertise turns a host name into the address memberlist needs:
// it gossips IPs, and a name given as gossip.advertise (a systemd unit's
// %H, a DNS name per node) would otherwise fail deep inside it. IPv4 is
// preferred, as RoCE fabrics' management networks mostly are.
func resolveAdvertise(host string) (string, error) {
	if net.ParseIP(host) != nil {
		return host, nil
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return "", fmt.Errorf("gossip advertise: cannot resolve %q (%v): give the IP address other nodes reach this one at", host, err)
	}
	for _, ip := range ips {
		if ip.To4() != nil {
			return ip.String(), nil
		}
	}
	return ips[0].String(), nil
}

// SharedHost slows the gossip of many simulated workers that share one
// host (the demo past a few dozen nodes, the scale harness). On real hosts
// each worker's gossip costs that host a constant trickle whatever N is;
// here hundreds share two cores, and local timers (push/pull every 2 s)
// with compression cost about 0.7 ms of CPU per worker-second: a 512-node
// demo never finished joining.
//
// Packets may be large: loopback and MockTransport have no 1,400-byte MTU,
// and with small packets the join storm (every worker queues every other's
// alive message and sends it 4 x log10(N) times, 16 M decodes at 1,024)
// trickles out for minutes, right through the sweep. Big packets send the
// same messages in seconds.
func SharedHost(c *memberlist.Config) {
	c.ProbeInterval = 5 * time.Second
	c.GossipInterval = time.Second
	c.PushPullInterval = time.Minute
	c.EnableCompression = false
	c.UDPBufferSize = 60_000
}
