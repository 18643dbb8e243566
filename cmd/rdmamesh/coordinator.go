package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/member"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/metrics"
	"github.com/rdmamesh/rdmamesh/web"
)

func newCoordinatorCmd() *cobra.Command {
	d := config.Defaults()
	cmd := &cobra.Command{
		Use:   "coordinator",
		Short: "Run a coordinator: learn workers from gossip, run sweeps, serve the API and UI",
		Args:  cobra.NoArgs,
	}
	f := cmd.Flags()
	f.String("name", "", "raft server ID (default: hostname)")
	f.String("gossip-bind", d["gossip.bind"].(string), "memberlist bind host:port")
	f.String("gossip-advertise", "", "memberlist address peers dial (host:port)")
	f.StringSlice("join", nil, "gossip seeds host:port, repeatable")
	f.String("api-listen", d["coordinator.api_listen"].(string), "API and web UI listen host:port")
	f.String("api-advertise", "", "API address other coordinators dial (host:port; default: listen address, or the first private IP)")
	f.String("data-dir", "", "raft log and snapshots directory (empty: in memory, history lost on restart)")
	f.Duration("pair-timeout", d["coordinator.pair_timeout"].(time.Duration), "deadline for one directional pair test")
	f.String("mode", d["sweep.mode"].(string), "default sweep mode: quick or full")
	f.String("topology", "", "the fabric's cabling plan (YAML/CSV) or ibnetdiscover output, for link localization")
	f.String("raft-bind", "", "raft transport host:port (empty: single coordinator, no raft network)")
	f.String("raft-advertise", "", "raft address peers dial (host:port)")
	f.StringSlice("peer", nil, "static bootstrap voter name=host:port, repeatable (list every coordinator, this one too)")
	f.Int("bootstrap-expect", d["coordinator.bootstrap_expect"].(int), "bootstrap once this many coordinators are seen in gossip (1, 3 or 5)")
	f.String("token-file", "", "file holding the API bearer token (auth.token_file)")
	f.String("gossip-key-file", "", "file holding the base64 gossip encryption key (gossip.key_file)")
	f.String("memory-limit", d["coordinator.memory_limit"].(string), "Go soft memory limit: auto (GOMEMLIMIT, else 90% of the cgroup limit), off, a size (5GiB) or a share of the cgroup limit (80%)")
	addInsecureFlag(f)
	addTLSFlags(f)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := loadConfig(cmd, withTLS(map[string]string{"name": "coordinator.name", "insecure": "auth.insecure", "gossip-bind": "gossip.bind",
			"gossip-advertise": "gossip.advertise", "join": "gossip.join", "api-listen": "coordinator.api_listen", "api-advertise": "coordinator.api_advertise",
			"data-dir": "coordinator.data_dir", "pair-timeout": "coordinator.pair_timeout", "mode": "sweep.mode",
			"topology": "coordinator.topology", "raft-bind": "coordinator.raft_bind", "raft-advertise": "coordinator.raft_advertise", "peer": "coordinator.peers",
			"bootstrap-expect": "coordinator.bootstrap_expect", "token-file": "auth.token_file",
			"gossip-key-file": "gossip.key_file", "memory-limit": "coordinator.memory_limit"}))
		if err != nil {
			return err
		}
		log := newLogger(c, cmd.ErrOrStderr())
		descriptorBudget(log, "coordinator", 0)
		if err := memoryBudget(log, c, "coordinator"); err != nil {
			return err
		}
		return runCoordinator(cmd.Context(), c, log)
	}
	return cmd
}

func testParams(c *config.Config) probe.TestParams {
	s := c.Sweep
	return probe.TestParams{LatencySize: s.LatencySize, LatencyIters: s.LatencyIters, Warmup: s.Warmup,
		BWSize: s.BWSize, BWIters: s.BWIters, TxDepth: s.TxDepth, Timeout: s.TestTimeout, Connect: s.Connect}
}

// sweepDefaults reads the sweep settings and the threshold files they name.
func sweepDefaults(c *config.Config) (coordinator.SweepDefaults, error) {
	d := coordinator.SweepDefaults{Pattern: c.Sweep.Pattern, BatchSize: c.Sweep.BatchSize, RailMode: c.Sweep.RailMode,
		Budget: c.Sweep.Budget, Retests: c.Sweep.Retests, Profile: c.Coordinator.Profile}
	if f := c.Coordinator.ProfilesFile; f != "" {
		r, err := os.Open(f)
		if err != nil {
			return d, &config.FieldError{Key: "coordinator.profiles_file", Msg: err.Error()}
		}
		defer r.Close()
		if d.Profiles, err = matrix.LoadProfiles(r); err != nil {
			return d, &config.FieldError{Key: "coordinator.profiles_file", Msg: fmt.Sprintf("%s: %v", f, err)}
		}
	}
	if _, ok := d.Profiles[d.Profile]; d.Profile != "" && !ok {
		return d, &config.FieldError{Key: "coordinator.profile", Msg: fmt.Sprintf("%q is not in coordinator.profiles_file (%q)", d.Profile, c.Coordinator.ProfilesFile)}
	}
	if f := c.Coordinator.BaselineFile; f != "" {
		r, err := os.Open(f)
		if err != nil {
			return d, &config.FieldError{Key: "coordinator.baseline_file", Msg: err.Error()}
		}
		defer r.Close()
		if d.Baseline, err = matrix.LoadBaseline(r, filepath.Base(f)); err != nil {
			return d, &config.FieldError{Key: "coordinator.baseline_file", Msg: fmt.Sprintf("%s: %v", f, err)}
		}
	}
	return d, nil
}

func runCoordinator(ctx context.Context, c *config.Config, log *slog.Logger) error {
	name := c.Coordinator.Name
	if name == "" {
		name = config.Hostname()
	}
	if err := testParams(c).Validate(); err != nil {
		return &config.FieldError{Key: "sweep", Msg: err.Error()}
	}
	g, err := guard(c, "coordinator", log)
	if err != nil {
		return err
	}
	token, key := g.Token, g.Key
	srvTLS, cliTLS, err := c.TLS.Configs()
	if err != nil {
		return err
	}
	defaults, err := sweepDefaults(c)
	if err != nil {
		return err
	}
	topo, err := loadTopology(c.Coordinator.Topology)
	if err != nil {
		return err
	}
	var peers []coordinator.Peer
	for _, p := range c.Coordinator.Peers {
		id, addr, _ := strings.Cut(p, "=")
		peers = append(peers, coordinator.Peer{ID: id, Addr: addr})
	}
	ln, err := net.Listen("tcp", c.Coordinator.APIListen)
	if err != nil {
		return fmt.Errorf("coordinator.api_listen %s: %w", c.Coordinator.APIListen, err)
	}
	apiAddr := member.Advertise(c.Coordinator.APIAdvertise, ln.Addr())
	co, err := coordinator.Start(coordinator.Options{Name: name, DataDir: c.Coordinator.DataDir,
		GossipBind: c.Gossip.Bind, GossipAdvertise: c.Gossip.Advertise, Join: c.Gossip.Join, LAN: true, WAN: c.Gossip.Profile == "wan",
		APIAddr: func() string { return apiAddr }, PairTimeout: c.Coordinator.PairTimeout,
		Parallelism: c.Coordinator.Parallelism, Params: testParams(c), Mode: c.Sweep.Mode, Logger: log,
		KeepSweeps: c.Coordinator.KeepSweeps, RaftBind: c.Coordinator.RaftBind, RaftAdvertise: c.Coordinator.RaftAdvertise,
		RaftTimeout: c.Coordinator.RaftTimeout,
		Peers:       peers, BootstrapExpect: c.Coordinator.BootstrapExpect, Token: token, GossipKey: key, SweepDefaults: defaults,
		TLS: srvTLS, ClientTLS: cliTLS, Live: liveOptions(c), Topology: topo,
		SkipTrace: !c.Coordinator.TracePaths, LossProbes: c.Coordinator.TraceLossProbes})
	if err != nil {
		ln.Close()
		return err
	}
	defer co.Stop()
	joinCtx, stopJoining := context.WithCancel(ctx)
	joined := make(chan struct{})
	if len(c.Gossip.Join) == 0 {
		log.Info("no gossip seeds (--join): this coordinator waits for workers and other coordinators to join it (their --join names this host)",
			"gossip", co.GossipAddr())
	}
	go func() { defer close(joined); keepJoining(joinCtx, co, c.Gossip.Join, log) }()
	defer func() { stopJoining(); <-joined }()
	// The UI's first views and the result metrics of a finished sweep are
	// derived in the background, one walk of its cells at a time, before
	// a browser or Prometheus asks; both stop with the command.
	prepCtx, stopPrep := context.WithCancel(ctx)
	reg := metrics.NewRegistry()
	results := metrics.NewCoordinator(co, metrics.CoordinatorOptions{Context: prepCtx})
	reg.MustRegister(results, metrics.NewLive(co, 0), metrics.BuildInfo("coordinator", version, commit, runtime.Version()))
	ws := web.New(co, web.Options{Logger: log, Title: "rdmamesh", Token: token,
		OpenReads: c.Auth.OpenReads, Metrics: metrics.Handler(reg), Prepare: results.PrepareNewest})
	prepared := make(chan struct{})
	go func() { defer close(prepared); ws.Prepare(prepCtx, web.DefaultPrepareEvery) }()
	defer func() { stopPrep(); <-prepared }()
	// Requests run under the command's context: at SIGTERM a browser's
	// request still walking a 4,096-node layer stops with it, instead of
	// holding Shutdown to its timeout.
	srv := &http.Server{Handler: ws.Handler(), ReadHeaderTimeout: 10 * time.Second, TLSConfig: srvTLS,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn), BaseContext: func(net.Listener) context.Context { return ctx }}
	served := make(chan error, 1)
	go func() { served <- member.Serve(srv, ln) }()
	log.Info("API and UI", "url", member.URL(srvTLS != nil, apiAddr, "/"))
	select {
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("web server: %w", err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("web shutdown", "err", err)
	}
	// Serve may have failed in the same moment ctx ended, and the select
	// took the stop; its error is still worth the operator's log.
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("web server", "err", err)
	}
	return nil
}

// liveOptions is the coordinator's live mesh from the live.* keys.
func liveOptions(c *config.Config) coordinator.LiveOptions {
	return coordinator.LiveOptions{Enabled: c.Live.Enabled, Params: liveplan.Params{RatePerHCA: c.Live.RatePerHCA,
		GroupRate: c.Live.GroupRate, Window: c.Live.Window, ProbesPerWindow: c.Live.ProbesPerWindow, Period: c.Live.Period,
		LinkRate: c.Live.LinkRate}}
}
