package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmamesh/rdmamesh/internal/config"
	"github.com/rdmamesh/rdmamesh/internal/counters"
	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/fabric/sim"
	"github.com/rdmamesh/rdmamesh/internal/fabric/verbs"
	"github.com/rdmamesh/rdmamesh/internal/inventory"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/metrics"
	"github.com/rdmamesh/rdmamesh/worker"
)

func newWorkerCmd() *cobra.Command {
	d := config.Defaults()
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run the per-node agent: publish HCAs over gossip, run RDMA tests for the coordinator",
		Args:  cobra.NoArgs,
	}
	f := cmd.Flags()
	f.String("name", "", "node name (default: hostname)")
	f.String("gossip-bind", d["gossip.bind"].(string), "memberlist bind host:port")
	f.String("gossip-advertise", "", "memberlist address peers dial (host:port)")
	f.StringSlice("join", nil, "gossip seeds host:port (a coordinator), repeatable")
	f.String("api-listen", d["worker.api_listen"].(string), "worker API listen host:port")
	f.String("api-advertise", "", "worker API address peers dial (host:port)")
	f.String("fabric", d["worker.fabric"].(string), "verbs (real HCAs) or sim (simulated)")
	f.String("gid", d["worker.gid"].(string), "GID selection policy: auto or index=N")
	f.StringSlice("device", nil, "only these HCAs (repeatable)")
	f.String("sim-preset", d["sim.preset"].(string), "sim fabric preset")
	f.Int64("sim-seed", d["sim.seed"].(int64), "sim fabric seed")
	f.StringSlice("sim-fault", nil, "sim fault spec, repeatable (e.g. node-03/mlx5_1:down)")
	f.Float64("sim-time-scale", d["sim.time_scale"].(float64), "sim: 1 = tests take modelled time, 0 = instant")
	f.String("token-file", "", "file holding the API bearer token (auth.token_file)")
	f.String("gossip-key-file", "", "file holding the base64 gossip encryption key (gossip.key_file)")
	addInsecureFlag(f)
	addTLSFlags(f)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := loadConfig(cmd, withTLS(map[string]string{"name": "worker.name", "insecure": "auth.insecure", "gossip-bind": "gossip.bind",
			"gossip-advertise": "gossip.advertise", "join": "gossip.join", "api-listen": "worker.api_listen",
			"api-advertise": "worker.api_advertise", "fabric": "worker.fabric", "gid": "worker.gid",
			"device": "worker.devices", "sim-preset": "sim.preset", "sim-seed": "sim.seed",
			"sim-fault": "sim.faults", "sim-time-scale": "sim.time_scale", "token-file": "auth.token_file",
			"gossip-key-file": "gossip.key_file"}))
		if err != nil {
			return err
		}
		log := newLogger(c, cmd.ErrOrStderr())
		descriptorBudget(log, "worker", workerDescriptors)
		return runWorker(cmd.Context(), c, log)
	}
	return cmd
}

func runWorker(ctx context.Context, c *config.Config, log *slog.Logger) error {
	name := c.Worker.Name
	if name == "" {
		name = config.Hostname()
	}
	g, err := guard(c, "worker", log)
	if err != nil {
		return err
	}
	token, key := g.Token, g.Key
	srvTLS, cliTLS, err := c.TLS.Configs()
	if err != nil {
		return err
	}
	pol, err := inventory.ParseGIDPolicy(c.Worker.GID)
	if err != nil {
		return &config.FieldError{Key: "worker.gid", Msg: err.Error()}
	}
	fab, err := openFabric(c, name, pol)
	if err != nil {
		return err
	}
	var discover func(context.Context) ([]probe.Port, []probe.Check, error)
	cr := fabric.CountersOf(fab)
	if c.Worker.Fabric == "verbs" {
		cr = counters.FS{Root: os.DirFS("/")}
		// Each port's LLDP neighbour: lldpd where it runs, else the frames on
		// the netdev, heard in the background (no wait: the inventory says
		// "listening since ..." until a switch announces itself).
		nc, err := inventory.NewNeighborCollector(ctx, inventory.NeighborOptions{Source: inventory.NeighborsAuto})
		if err != nil {
			return err
		}
		defer nc.Close() // after a.Stop, deferred below: no rescan still asks it
		discover = func(context.Context) ([]probe.Port, []probe.Check, error) {
			h, err := inventory.Scan(os.DirFS("/"), inventory.SystemOptions("/"))
			if err != nil {
				return nil, nil, err
			}
			h.LookupNeighbors("", nc.Lookup)
			return h.Ports(pol), h.Checks(), nil
		}
	}
	wm := metrics.NewWorker()
	reg := metrics.NewRegistry()
	reg.MustRegister(wm, metrics.BuildInfo("worker", version, commit, runtime.Version()))
	a, err := worker.Start(ctx, worker.Options{Name: name, Fabric: fab, GossipBind: c.Gossip.Bind,
		GossipAdvertise: c.Gossip.Advertise, Join: c.Gossip.Join, APIListen: c.Worker.APIListen,
		APIAdvertise: c.Worker.APIAdvertise, Labels: c.Worker.Labels, Devices: c.Worker.Devices, LAN: true, WAN: c.Gossip.Profile == "wan", Logger: log,
		Discover: discover, Token: token, GossipKey: key, TLS: srvTLS, ClientTLS: cliTLS, Prober: liveProber(c, fab, log), Counters: cr,
		OnTask: wm.ObserveTask, OnSession: wm.ObserveSession, Metrics: metrics.Handler(reg)})
	if err != nil {
		return err
	}
	wm.SetSource(a)
	defer a.Stop()
	if len(c.Gossip.Join) == 0 {
		log.Warn("no gossip seeds (--join): this worker waits for a coordinator to join it")
	}
	keepJoining(ctx, a, c.Gossip.Join, log)
	<-ctx.Done()
	log.Info("worker stopping")
	return nil
}

// joiner is a gossip member that can retry its seeds (worker or coordinator).
type joiner interface {
	Members() int
	Join(seeds []string) error
}

// keepJoining retries the seeds until we see another member: in Kubernetes
// or Slurm the coordinator may start after the workers. Without seeds each
// role says what it waits for itself.
func keepJoining(ctx context.Context, a joiner, seeds []string, log *slog.Logger) {
	if len(seeds) == 0 {
		return
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for a.Members() < 2 {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := a.Join(seeds); err != nil {
				log.Debug("gossip join retry", "err", err)
			}
		}
	}
}

func openFabric(c *config.Config, name string, pol inventory.GIDPolicy) (fabric.Fabric, error) {
	if c.Worker.Fabric == "sim" {
		faults, err := sim.ParseFaults(c.Sim.Faults)
		if err != nil {
			return nil, &config.FieldError{Key: "sim.faults", Msg: err.Error()}
		}
		f, err := sim.New(sim.Config{Preset: c.Sim.Preset, Seed: c.Sim.Seed, Faults: faults, TimeScale: c.Sim.TimeScale})
		if err != nil {
			return nil, &config.FieldError{Key: "sim.preset", Msg: err.Error()}
		}
		return fabric.Adapt(f.Node(name)), nil
	}
	// Discovery applies the full GID policy and the coordinator passes its
	// choice per test; the engine's own fallback only knows auto and index.
	gid := "auto"
	if pol.Mode == inventory.ModeIndex {
		gid = pol.String()
	}
	f, err := verbs.New(verbs.Options{Devices: c.Worker.Devices, GID: gid})
	if err != nil {
		return nil, fmt.Errorf("worker.fabric verbs: %w (use --fabric sim to run without RDMA hardware)", err)
	}
	return f, nil
}

// liveProber is the fabric's probe ports when live probing is on (the
// coordinator's plan then says whom to probe). Both fabrics have them; a
// fabric without would be said so once instead of probing nothing silently.
func liveProber(c *config.Config, fab fabric.Fabric, log *slog.Logger) fabric.Prober {
	if !c.Live.Enabled {
		return nil
	}
	p := fabric.ProberOf(fab)
	if p == nil {
		log.Info("live probing: this fabric has no probe ports; this worker takes part in sweeps only", "fabric", fab.Name())
	}
	return p
}
