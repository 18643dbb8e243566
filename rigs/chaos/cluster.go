package chaos

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// coord is one coordinator process. Its gossip, API and advertised raft
// (proxy) addresses stay fixed for the whole run, so a restarted process is
// the same member to gossip and the same voter to raft.
type coord struct {
	name     string
	p        *proc
	raftAdv  string // the Net proxy: what every peer dials
	raftBind string // where the process listens; the proxy forwards here
	gossip   string
	api      string
	dataDir  string
	started  bool // once up, the gossip address is fixed
}

// wproc is one worker process.
type wproc struct {
	name   string
	p      *proc
	gossip string
	api    string
}

// Cluster is the set of processes under test.
type Cluster struct {
	o       Options
	ports   *ports
	net     *Net
	api     *client
	coords  []*coord
	workers []*wproc
	token   string // API bearer token
	key     string // gossip key, base64
	files   struct{ token, key string }
	say     func(format string, a ...any)
}

func newCluster(o Options, say func(string, ...any)) (_ *Cluster, err error) {
	c := &Cluster{o: o, ports: newPorts(), net: newNet(), say: say}
	defer func() {
		if err != nil {
			c.net.Close()
		}
	}()
	tok := make([]byte, 24)
	key := make([]byte, 32)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	c.token = hex.EncodeToString(tok)
	c.key = base64.StdEncoding.EncodeToString(key)
	c.files.token = filepath.Join(o.Dir, "token")
	c.files.key = filepath.Join(o.Dir, "gossip.key")
	if err := os.WriteFile(c.files.token, []byte(c.token+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.files.key, []byte(c.key+"\n"), 0o600); err != nil {
		return nil, err
	}
	c.api = newClient(c.token, c.key)
	for i := range 3 {
		name := fmt.Sprintf("coord-%d", i+1)
		co := &coord{name: name, dataDir: filepath.Join(o.Dir, name),
			p: &proc{name: name, bin: o.Bin, log: filepath.Join(o.Dir, name+".log")}}
		// Every gossip address is known before the first start, so each
		// coordinator's --join lists all the others.
		if co.raftAdv, err = c.ports.addr(false); err != nil {
			return nil, err
		}
		if co.gossip, err = c.ports.addr(true); err != nil {
			return nil, err
		}
		if err := c.net.Listen(name, co.raftAdv); err != nil {
			return nil, fmt.Errorf("raft proxy for %s: %w", name, err)
		}
		c.coords = append(c.coords, co)
	}
	for i := range o.Workers {
		name := fmt.Sprintf("node-%02d", i+1)
		c.workers = append(c.workers, &wproc{name: name,
			p: &proc{name: name, bin: o.Bin, log: filepath.Join(o.Dir, name+".log")}})
	}
	return c, nil
}

// Start brings every coordinator up one after the other (each joins gossip
// through the ones already up), then every worker.
func (c *Cluster) Start(ctx context.Context) error {
	for _, co := range c.coords {
		if err := c.startCoord(ctx, co); err != nil {
			return err
		}
	}
	for _, w := range c.workers {
		if err := c.startWorker(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) coordArgs(co *coord) []string {
	args := []string{"coordinator", "--name", co.name, "--raft-bind", co.raftBind, "--raft-advertise", co.raftAdv,
		"--data-dir", co.dataDir, "--gossip-bind", co.gossip, "--api-listen", co.api,
		"--token-file", c.files.token, "--gossip-key-file", c.files.key,
		"--pair-timeout", c.o.PairTimeout.String(), "--log-level", c.o.LogLevel}
	for _, p := range c.coords {
		args = append(args, "--peer", p.name+"="+p.raftAdv)
		if p != co {
			args = append(args, "--join", p.gossip)
		}
	}
	return args
}

// startCoord starts (or restarts) a coordinator and waits until it serves
// HTTP. A first start that loses a port race is retried on fresh ports; a
// restart keeps its gossip address (memberlist refuses a known name at a
// new address) and may move only its raft bind and API.
func (c *Cluster) startCoord(ctx context.Context, co *coord) error {
	for attempt := 1; ; attempt++ {
		var err error
		if !co.started && attempt > 1 {
			if co.gossip, err = c.ports.addr(true); err != nil {
				return err
			}
		}
		if co.api == "" || attempt > 1 {
			if co.api, err = c.ports.addr(false); err != nil {
				return err
			}
		}
		if co.raftBind == "" || attempt > 1 {
			if co.raftBind, err = c.ports.addr(false); err != nil {
				return err
			}
		}
		c.net.Route(co.name, co.raftBind)
		if err := co.p.start(c.coordArgs(co)); err != nil {
			return err
		}
		err = c.waitServing(ctx, co.p, co.api)
		if err == nil {
			co.started = true
			return nil
		}
		if !co.p.bindFailed() || attempt == 3 {
			return fmt.Errorf("%s did not come up: %w\n%s", co.name, err, indent(co.p.tail(15)))
		}
		c.say("  %s lost a port race (attempt %d); retrying on fresh ports", co.name, attempt)
	}
}

func (c *Cluster) workerArgs(w *wproc) []string {
	args := []string{"worker", "--name", w.name, "--fabric", "sim",
		"--sim-time-scale", strconv.FormatFloat(c.o.TimeScale, 'g', -1, 64),
		"--sim-seed", strconv.FormatInt(c.o.Seed, 10),
		"--gossip-bind", w.gossip, "--api-listen", w.api,
		"--token-file", c.files.token, "--gossip-key-file", c.files.key, "--log-level", c.o.LogLevel}
	for _, co := range c.coords {
		args = append(args, "--join", co.gossip)
	}
	return args
}

func (c *Cluster) startWorker(ctx context.Context, w *wproc) error {
	first := w.gossip == ""
	for attempt := 1; ; attempt++ {
		var err error
		if first {
			if w.gossip, err = c.ports.addr(true); err != nil {
				return err
			}
		}
		if w.api == "" || attempt > 1 {
			if w.api, err = c.ports.addr(false); err != nil {
				return err
			}
		}
		if err := w.p.start(c.workerArgs(w)); err != nil {
			return err
		}
		err = c.waitServing(ctx, w.p, w.api)
		if err == nil {
			return nil
		}
		if !w.p.bindFailed() || attempt == 3 {
			return fmt.Errorf("%s did not come up: %w\n%s", w.name, err, indent(w.p.tail(15)))
		}
		c.say("  %s lost a port race (attempt %d); retrying on fresh ports", w.name, attempt)
	}
}

// waitServing waits until the process answers /healthz, or has exited.
func (c *Cluster) waitServing(ctx context.Context, p *proc, addr string) error {
	err := waitFor(ctx, 20*time.Second, p.name+" to serve /healthz", func() (bool, string) {
		if !p.running() {
			return true, ""
		}
		err := c.api.do(ctx, "GET", addr, "/healthz", nil, nil)
		return err == nil, fmt.Sprint(err)
	})
	if err == nil && !p.running() {
		return fmt.Errorf("%s exited during start", p.name)
	}
	return err
}

// Stop ends every process: SIGTERM, then SIGKILL after a short grace (a
// coordinator's clean stop shuts raft down; nothing here depends on it).
func (c *Cluster) Stop() {
	done := make(chan struct{})
	all := c.procs()
	for _, p := range all {
		go func() { p.stop(3 * time.Second); done <- struct{}{} }()
	}
	for range all {
		<-done
	}
	c.net.Close()
}

func (c *Cluster) coord(name string) *coord {
	for _, co := range c.coords {
		if co.name == name {
			return co
		}
	}
	return nil
}

func (c *Cluster) live() []*coord {
	var out []*coord
	for _, co := range c.coords {
		if co.p.running() {
			out = append(out, co)
		}
	}
	return out
}

func (c *Cluster) liveWorkers() []string {
	var out []string
	for _, w := range c.workers {
		if w.p.running() {
			out = append(out, w.name)
		}
	}
	return out
}

// secretLeaks lists the process logs that contain the token or the gossip
// key: secrets must never be logged.
func (c *Cluster) secretLeaks() []string {
	var out []string
	for _, p := range c.procs() {
		b, err := os.ReadFile(p.log)
		if err == nil && (strings.Contains(string(b), c.token) || strings.Contains(string(b), c.key)) {
			out = append(out, filepath.Base(p.log))
		}
	}
	return out
}

func (c *Cluster) procs() []*proc {
	var all []*proc
	for _, w := range c.workers {
		all = append(all, w.p)
	}
	for _, co := range c.coords {
		all = append(all, co.p)
	}
	return all
}

// indent marks quoted log lines so they stand out from the driver's own.
func indent(s string) string {
	if s == "" {
		return "    (no log output)"
	}
	return "    | " + strings.ReplaceAll(s, "\n", "\n    | ") + "\n"
}

// pids names the running children's process ids (for the memory guard).
func (c *Cluster) pids() map[string]int {
	out := map[string]int{}
	for _, p := range c.procs() {
		if p.running() {
			out[p.name] = p.pid()
		}
	}
	return out
}
