package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/coordinator"
	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/internal/probe"
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
	f.String("data-dir", "", "raft log and snapshots directory (empty: in memory, history lost on restart)")
	f.Duration("pair-timeout", d["coordinator.pair_timeout"].(time.Duration), "deadline for one directional pair test")
	f.String("mode", d["sweep.mode"].(string), "default sweep mode: quick or full")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := loadConfig(cmd, map[string]string{"name": "coordinator.name", "gossip-bind": "gossip.bind",
			"gossip-advertise": "gossip.advertise", "join": "gossip.join", "api-listen": "coordinator.api_listen",
			"data-dir": "coordinator.data_dir", "pair-timeout": "coordinator.pair_timeout", "mode": "sweep.mode"})
		if err != nil {
			return err
		}
		return runCoordinator(cmd.Context(), c, newLogger(c, cmd.ErrOrStderr()))
	}
	return cmd
}

func testParams(c *config.Config) probe.TestParams {
	s := c.Sweep
	return probe.TestParams{LatencySize: s.LatencySize, LatencyIters: s.LatencyIters, Warmup: s.Warmup,
		BWSize: s.BWSize, BWIters: s.BWIters, TxDepth: s.TxDepth, Timeout: s.TestTimeout}
}

func runCoordinator(ctx context.Context, c *config.Config, log *slog.Logger) error {
	name := c.Coordinator.Name
	if name == "" {
		name = config.Hostname()
	}
	if err := testParams(c).Validate(); err != nil {
		return &config.FieldError{Key: "sweep", Msg: err.Error()}
	}
	ln, err := net.Listen("tcp", c.Coordinator.APIListen)
	if err != nil {
		return fmt.Errorf("coordinator.api_listen %s: %w", c.Coordinator.APIListen, err)
	}
	apiAddr := ln.Addr().String()
	co, err := coordinator.Start(coordinator.Options{Name: name, DataDir: c.Coordinator.DataDir,
		GossipBind: c.Gossip.Bind, GossipAdvertise: c.Gossip.Advertise, Join: c.Gossip.Join, LAN: true,
		APIAddr: func() string { return apiAddr }, PairTimeout: c.Coordinator.PairTimeout,
		Parallelism: c.Coordinator.Parallelism, Params: testParams(c), Mode: c.Sweep.Mode, Logger: log})
	if err != nil {
		ln.Close()
		return err
	}
	defer co.Stop()
	srv := &http.Server{Handler: web.New(co, web.Options{Logger: log, Title: "rdmamesh"}).Handler(),
		ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("API and UI", "url", "http://"+apiAddr)
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
	<-served
	return nil
}
