package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/member"
	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// registry is the coordinator's view of membership, fed by gossip events and
// inventories fetched from each worker's API.
type registry struct {
	mu    sync.RWMutex
	nodes map[string]*regNode
	gens  map[string]uint64 // inventory generation already fetched
	// slots finds records by their node's position in the running sweep's
	// start record (pair), each beside the sweep's own copy of its name,
	// which a pair's name (the same copy) equals at a pointer compare. A
	// lookup in nodes hashes the name and compares the bytes of a name
	// gossip made, off in a cold part of the heap; an earlier map keyed by
	// the sweep's names still cost 4 of the leader's 184 CPU-s at 4,096
	// nodes in its hashing and buckets. It starts over when another sweep
	// asks. A record is never replaced or dropped, so a slot cannot go
	// stale.
	slots     []sweepSlot
	slotSweep string
}

// sweepSlot is a record and the running sweep's copy of its name.
type sweepSlot struct {
	name string
	n    *regNode
}

// regNode is a member's record and the task target of its API address,
// kept with it once a task has been sent there (cachedTarget).
type regNode struct {
	api.NodeInfo
	target atomic.Pointer[taskTarget]
}

func newRegistry() *registry {
	return &registry{nodes: map[string]*regNode{}, gens: map[string]uint64{}}
}

func (r *registry) list() []api.NodeInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]api.NodeInfo, 0, len(r.nodes))
	for _, n := range r.nodes {
		out = append(out, n.NodeInfo)
	}
	slices.SortFunc(out, func(a, b api.NodeInfo) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

func (r *registry) get(name string) (api.NodeInfo, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n, ok := r.nodes[name]
	if !ok {
		return api.NodeInfo{}, false
	}
	return n.NodeInfo, true
}

// pairInfo is what a task needs of its two workers: their states and API
// addresses, under one read lock and without copying the rest of their
// records (at 4,096 nodes the two lookups a task were 11 of the leader's
// 340 CPU-s, mostly cache misses on records no other step reads).
type pairInfo struct {
	state, api [2]string
	ok         [2]bool
	target     *atomic.Pointer[taskTarget] // the first's; nil when unknown
}

// pair is the pair info of the workers a and b, at positions ia and ib of
// sweep's start record (sweep.Task's SrcIndex and DstIndex).
func (r *registry) pair(sweep string, ia int, a string, ib int, b string) pairInfo {
	var p pairInfo
	r.mu.RLock()
	ns := [2]*regNode{r.slot(sweep, ia, a), r.slot(sweep, ib, b)}
	if ns[0] == nil || ns[1] == nil {
		r.mu.RUnlock()
		r.learn(sweep, ia, a, ib, b)
		r.mu.RLock()
		ns = [2]*regNode{r.nodes[a], r.nodes[b]}
	}
	for i, n := range ns {
		if n != nil {
			p.state[i], p.api[i], p.ok[i] = n.State, n.APIAddr, true
			if i == 0 {
				p.target = &n.target
			}
		}
	}
	r.mu.RUnlock()
	return p
}

// slot is the record of name at position i of sweep's nodes, when the
// slots have it; the caller holds r.mu.
func (r *registry) slot(sweep string, i int, name string) *regNode {
	if sweep != r.slotSweep || i < 0 || i >= len(r.slots) || r.slots[i].name != name {
		return nil
	}
	return r.slots[i].n
}

// maxSlots bounds the slots: positions past it are looked up by name.
const maxSlots = 1 << 16

// learn puts sweep's copies of names a and b, at positions ia and ib, and
// their records in the slots.
func (r *registry) learn(sweep string, ia int, a string, ib int, b string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sweep != r.slotSweep {
		r.slots, r.slotSweep = nil, sweep
	}
	r.put(ia, a)
	r.put(ib, b)
}

// put puts name, at position i, and its record in the slots; r.mu is held.
func (r *registry) put(i int, name string) {
	n := r.nodes[name]
	if n == nil || i < 0 || i >= maxSlots {
		return
	}
	if i >= len(r.slots) {
		r.slots = append(r.slots, make([]sweepSlot, i+1-len(r.slots))...)
	}
	r.slots[i] = sweepSlot{name, n}
}

// gossipEvent is what the event delegate hands the registry goroutine.
type gossipEvent struct {
	name  string
	addr  string
	meta  []byte
	state memberlist.NodeStateType
}

// events adapts memberlist callbacks; it must never block memberlist, so it
// drops into a buffered channel and the periodic reconcile covers any drop.
type events struct{ ch chan gossipEvent }

var _ memberlist.EventDelegate = (*events)(nil)

// memberlist never sets Node.State (its nodeState.State shadows it), so the
// state comes from which callback fired. NotifyLeave does not say whether
// the node left or died; dead is the safe reading.
func (e *events) send(n *memberlist.Node, st memberlist.NodeStateType) {
	ev := gossipEvent{name: n.Name, addr: n.Address(), meta: append([]byte(nil), n.Meta...), state: st}
	select {
	case e.ch <- ev:
	default:
	}
}

func (e *events) NotifyJoin(n *memberlist.Node)   { e.send(n, memberlist.StateAlive) }
func (e *events) NotifyLeave(n *memberlist.Node)  { e.send(n, memberlist.StateDead) }
func (e *events) NotifyUpdate(n *memberlist.Node) { e.send(n, memberlist.StateAlive) }

// coordDelegate publishes the coordinator's own meta.
type coordDelegate struct {
	apiAddr  func() string
	raftAddr string
}

func (d *coordDelegate) NodeMeta(limit int) []byte {
	b, err := member.Meta{Role: member.RoleCoordinator, APIAddr: d.apiAddr(), RaftAddr: d.raftAddr}.Encode()
	if err != nil || len(b) > limit {
		return nil
	}
	return b
}
func (d *coordDelegate) NotifyMsg([]byte)                           {}
func (d *coordDelegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (d *coordDelegate) LocalState(join bool) []byte                { return nil }
func (d *coordDelegate) MergeRemoteState(buf []byte, join bool)     {}

func stateName(s memberlist.NodeStateType) string {
	switch s {
	case memberlist.StateAlive:
		return "alive"
	case memberlist.StateSuspect:
		return "suspect"
	case memberlist.StateDead:
		return "dead"
	case memberlist.StateLeft:
		return "left"
	}
	return "unknown"
}

// watchMembers owns the registry updates until ctx ends.
func (c *Coordinator) watchMembers(ctx context.Context) {
	tick := time.NewTicker(c.opts.Reconcile)
	defer tick.Stop()
	// Remembered members are saved within a second of a change, so even a
	// coordinator that crashes right after start can rejoin them.
	save := time.NewTicker(time.Second)
	defer save.Stop()
	var saved []string
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-c.events.ch:
			c.observe(ctx, ev)
		case <-save.C:
			saved = c.saveMembers(saved)
		case <-tick.C:
			// Catch anything the non-blocking event path dropped.
			for _, n := range c.ml.Members() {
				c.observe(ctx, gossipEvent{name: n.Name, addr: n.Address(), meta: n.Meta, state: memberlist.StateAlive})
			}
		}
	}
}

func (c *Coordinator) observe(ctx context.Context, ev gossipEvent) {
	m, err := member.Decode(ev.meta)
	if err != nil {
		c.log.Debug("ignoring member with unreadable meta", "node", ev.name, "err", err)
		return
	}
	c.reg.mu.Lock()
	n, ok := c.reg.nodes[ev.name]
	// A worker back from dead is a new process: its generation restarts at
	// 1, so only the transition says its inventory must be fetched again.
	back := ok && n.State != "alive"
	if !ok {
		n = &regNode{NodeInfo: api.NodeInfo{Name: ev.name}}
		c.reg.nodes[ev.name] = n
	}
	n.Role, n.State, n.Addr, n.RaftAddr, n.LastSeen = m.Role, stateName(ev.state), ev.addr, m.RaftAddr, time.Now()
	if n.APIAddr != m.APIAddr {
		// Kept when unchanged: the task target cached beside it
		// (cachedTarget) is checked against it every task, and the same
		// string compares by its pointer.
		n.APIAddr = m.APIAddr
	}
	need := m.Role == member.RoleWorker && ev.state == memberlist.StateAlive && (c.reg.gens[ev.name] != m.Generation || back)
	c.reg.mu.Unlock()
	switch {
	case ev.state == memberlist.StateDead && c.inflight.running(ev.name) > 0 && m.APIAddr != "":
		c.wg.Add(1)
		go func() { defer c.wg.Done(); c.confirmDead(ctx, ev.name, m.APIAddr) }()
	case ev.state == memberlist.StateDead || ev.state == memberlist.StateLeft:
		c.endTests(ev.name)
	}
	if !need {
		return
	}
	inv, err := c.fetchInventory(ctx, m.APIAddr)
	if err != nil {
		c.log.Warn("cannot fetch worker inventory; will retry", "node", ev.name, "api", m.APIAddr, "err", err)
		return
	}
	c.reg.mu.Lock()
	c.reg.gens[ev.name] = m.Generation
	if n, ok := c.reg.nodes[ev.name]; ok {
		n.Inventory = inv
	}
	c.reg.mu.Unlock()
}

func (c *Coordinator) endTests(node string) {
	if n := c.inflight.nodeDead(node); n > 0 {
		c.log.Warn("worker gone; ending its running tests as peer-lost", "node", node, "tests", n)
	}
}

// confirmDead asks a worker that gossip declared dead for its health before
// ending its tests. A host whose CPU is saturated (a busy-polling test on
// few cores, Soft-RoCE in a VM) misses gossip probes while its worker is
// fine; its tests keep running, bounded by the pair deadline. A worker that
// is really gone does not answer, or refuses at once.
func (c *Coordinator) confirmDead(ctx context.Context, node, apiAddr string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := c.getWorker(ctx, apiAddr, "/v1/health")
	if err == nil {
		resp.Body.Close()
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		c.endTests(node)
		return
	}
	c.log.Warn("gossip declared a worker dead but its API answers (an overloaded host misses gossip probes); its running tests continue until the pair deadline",
		"node", node, "tests", c.inflight.running(node))
}

// getWorker GETs path from a worker's API with our credentials.
func (c *Coordinator) getWorker(ctx context.Context, apiAddr, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(apiAddr, path), nil)
	if err != nil {
		return nil, err
	}
	c.authorize(req)
	return c.client.Do(req)
}

func (c *Coordinator) fetchInventory(ctx context.Context, apiAddr string) (*probe.Inventory, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := c.getWorker(ctx, apiAddr, "/v1/inventory")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("inventory: %s", resp.Status)
	}
	var inv probe.Inventory
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&inv); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	if inv.Version != probe.Version {
		return nil, fmt.Errorf("inventory version %d, want %d: run the same rdmamesh version everywhere", inv.Version, probe.Version)
	}
	return &inv, nil
}
