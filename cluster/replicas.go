package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/member"
	"github.com/rdmamesh/rdmamesh/metrics"
	"github.com/rdmamesh/rdmamesh/web"
)

// startCoordinators starts the replicas: one listens on o.Listen, the
// others on free loopback ports. Raft runs on in-memory transports wired
// all-to-all, so a partition is a Disconnect away.
func (c *Cluster) startCoordinators(o Options) error {
	n := max(o.Coordinators, 1)
	var peers []coordinator.Peer
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("coordinator-%d", i)
		addr, trans := raft.NewInmemTransport(raft.ServerAddress(id))
		c.Coords = append(c.Coords, &Replica{trans: trans, served: make(chan error, 1)})
		peers = append(peers, coordinator.Peer{ID: id, Addr: string(addr)})
	}
	for _, a := range c.Coords {
		for _, b := range c.Coords {
			if a != b {
				a.trans.Connect(b.trans.LocalAddr(), b.trans)
			}
		}
	}
	var seeds []string
	for i, r := range c.Coords {
		listen := o.Listen
		if i > 0 {
			listen = "127.0.0.1:0"
		}
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return fmt.Errorf("listen %s: %w", listen, err)
		}
		r.URL = member.URL(o.TLS != nil, ln.Addr().String(), "")
		co, err := coordinator.Start(coordinator.Options{Name: peers[i].ID, DataDir: dataDir(o.DataDir, i, n),
			GossipBind: "127.0.0.1:0", Join: seeds, APIAddr: ln.Addr().String, PairTimeout: o.PairTimeout,
			Params: o.Params, Mode: o.Mode, FastRaft: true, Reconcile: 500 * time.Millisecond, Logger: c.log,
			RaftTransport: r.trans, Peers: peers, Token: o.Token, GossipKey: o.GossipKey, SweepDefaults: o.Sweep,
			ClientTLS: o.ClientTLS, Live: o.Live, Topology: o.Topology, LossProbes: o.LossProbes})
		if err != nil {
			ln.Close()
			return err
		}
		r.Coordinator = co
		prepCtx, stopPrep := context.WithCancel(context.Background())
		reg := metrics.NewRegistry()
		results := metrics.NewCoordinator(co, metrics.CoordinatorOptions{Context: prepCtx})
		reg.MustRegister(results, metrics.NewLive(co, 0), metrics.BuildInfo("coordinator", o.Version, o.Commit, runtime.Version()))
		ws := web.New(co, web.Options{Logger: c.log, Title: "rdmamesh demo", Token: o.Token, Metrics: metrics.Handler(reg),
			Prepare: results.PrepareNewest})
		r.srv = &http.Server{Handler: ws.Handler(), ReadHeaderTimeout: 10 * time.Second, TLSConfig: o.TLS,
			ErrorLog: slog.NewLogLogger(c.log.Handler(), slog.LevelWarn)}
		go func() { r.served <- member.Serve(r.srv, ln) }()
		r.prepared = make(chan struct{})
		r.stopPrep = stopPrep
		go func() { defer close(r.prepared); ws.Prepare(prepCtx, web.DefaultPrepareEvery) }()
		seeds = append(seeds, co.GossipAddr())
	}
	return nil
}

func dataDir(base string, i, n int) string {
	if base == "" || n == 1 {
		return base
	}
	return fmt.Sprintf("%s/coordinator-%d", base, i)
}

// Leader returns the replica that currently leads, or nil.
func (c *Cluster) Leader() *Replica {
	for _, r := range c.Coords {
		if !r.down && r.IsLeader() {
			return r
		}
	}
	return nil
}

// KillReplica stops a replica abruptly, like kill -9: no gossip leave, raft
// links cut.
func (c *Cluster) KillReplica(r *Replica) {
	c.Partition(r)
	c.stopReplica(r)
}

// Partition cuts r's raft links to every other replica (gossip and HTTP stay
// up: the raft majority is what decides writes).
func (c *Cluster) Partition(r *Replica) {
	r.trans.DisconnectAll()
	for _, o := range c.Coords {
		if o != r {
			o.trans.Disconnect(r.trans.LocalAddr())
		}
	}
}

// Heal reconnects r to every other live replica.
func (c *Cluster) Heal(r *Replica) {
	for _, o := range c.Coords {
		if o != r && !o.down {
			r.trans.Connect(o.trans.LocalAddr(), o.trans)
			o.trans.Connect(r.trans.LocalAddr(), r.trans)
		}
	}
}

func (c *Cluster) stopReplica(r *Replica) {
	if r.down || r.Coordinator == nil {
		return
	}
	r.down = true
	if r.stopPrep != nil {
		r.stopPrep()
		<-r.prepared
	}
	if r.srv != nil {
		_ = r.srv.Close()
		if err := <-r.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.log.Warn("web server", "err", err)
		}
	}
	r.Stop()
}
