package coordinator

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/live"
	"github.com/rdmamesh/rdmamesh/coordinator/store"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/fabric"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
)

// LiveOptions turn on the always-on mesh: the leader plans which HCAs
// probe which, commits the plan, pushes it to the workers, collects their
// window summaries and judges them like a sweep (coordinator/live).
type LiveOptions struct {
	Enabled bool
	Params  liveplan.Params
	Judge   live.Options
	// Thresholds judge the live matrix; zero = matrix.DefaultThresholds.
	Thresholds matrix.Thresholds
}

// mesh is the leader's live state; followers keep an empty one.
type mesh struct {
	mu   sync.Mutex
	plan *liveplan.Plan
	cov  liveplan.Coverage
	key  string // the members the plan was made for
	body []byte // the plan as the workers take it (wire.LivePlanMsg)
	// pending is a membership seen but not planned yet, since pendingAt
	// (see due).
	pending   string
	pendingAt time.Time
	mx        *live.Matrix
	since     map[string]int64     // per worker: the newest window collected
	heard     map[string]time.Time // per worker: when it last answered a collection
	judged    *matrix.Matrix
	judgedW   int64
	// traced are the plan's link flows' traced links (livesteer.go);
	// resteer: the plan's flows wait for a judged window to be traced
	// (the ports' addresses come from it).
	traced  map[liveFlow][]int32
	resteer bool
	// rails is each rail's probing as of the judged window (/metrics):
	// computing it walks every live cell, so once a window, not a scrape.
	rails []api.LiveRail
	err   string
}

// liveFanout bounds the concurrent plan pushes and collections: at 1,024
// workers one collection round is 1,024 small requests every few seconds.
const liveFanout = 32

// runLive is the leader's live loop: plan, push, collect, judge, twice a
// window, until leadership ends.
func (c *Coordinator) runLive(ctx context.Context) {
	if err := c.opts.Live.Params.Validate(); err != nil {
		c.setLiveErr(err.Error())
		return
	}
	c.mesh.restart(live.New(c.opts.Live.Judge))
	t := time.NewTicker(c.liveWindow() / 2)
	defer t.Stop()
	for {
		c.liveStep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// restart forgets a previous leadership's plan and windows: another
// leader may have committed newer plans since, so numbering continues
// from the committed plan (replan), never from what this replica last
// made, and a judged matrix from back then is not this leadership's.
func (m *mesh) restart(mx *live.Matrix) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.plan, m.cov, m.key, m.body, m.pending, m.pendingAt = nil, liveplan.Coverage{}, "", nil, "", time.Time{}
	m.judged, m.judgedW, m.rails, m.err, m.traced, m.resteer = nil, 0, nil, "", nil, false
	m.mx, m.since, m.heard = mx, map[string]int64{}, map[string]time.Time{}
}

// liveStep plans when the membership changed, then collects and judges
// under the plan in force: a plan that could not be remade (a raft
// hiccup) leaves the current one probing rather than stopping the mesh.
// The problem is reported until a step goes without one.
func (c *Coordinator) liveStep(ctx context.Context) {
	members, nodes := c.liveMembers()
	err := c.replan(ctx, members)
	c.collect(ctx, members)
	c.judge(nodes)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	c.setLiveErr(msg)
}

// liveMembers are the alive workers that published probe ports, as plan
// members and as matrix nodes.
func (c *Coordinator) liveMembers() ([]liveplan.Member, []matrix.Node) {
	var nodes []matrix.Node
	var infos []api.NodeInfo
	for _, n := range c.reg.list() {
		if n.Role != "worker" || n.State != "alive" || n.Inventory == nil || len(n.Inventory.Live) == 0 {
			continue
		}
		infos = append(infos, n)
		nodes = append(nodes, matrix.Node{Name: n.Name, State: n.State, Labels: n.Inventory.Labels, Ports: n.Inventory.Ports})
	}
	label := matrix.GroupLabel(nodes, c.opts.Live.Thresholds.GroupLabel)
	topo := c.Topology()
	members := make([]liveplan.Member, 0, len(infos))
	for _, n := range infos {
		m := liveplan.Member{Name: n.Name, Group: n.Inventory.Labels[label]}
		la := slices.Clone(n.Inventory.Live)
		slices.SortFunc(la, func(a, b probe.LiveAddr) int { return a.Rail - b.Rail })
		for _, a := range la {
			m.Rails = append(m.Rails, a.Rail)
			m.Addrs = append(m.Addrs, fabric.ProbeAddr{Node: n.Name, Device: a.Device, GID: a.GID, LID: a.LID, QPN: a.QPN, QKey: a.QKey})
		}
		if m.Group == "" && topo != nil && len(m.Rails) > 0 {
			m.Group = leafGroup(topo, n.Name, m.Rails[0])
		}
		members = append(members, m)
	}
	return members, nodes
}

// leafGroup is a node's switch group from the topology when no label gives
// one: the leaf of its HCA on rail (a rail-optimized fabric's nodes share
// their leaves on every rail), so that leaf mates probe each other all
// the time and those probes weigh on their own cables (coordinator/live).
func leafGroup(t *topology.Topology, node string, rail int) string {
	if h, ok := t.HCA(node, rail); ok && t.LeafOf(h) >= 0 {
		return t.Switches[t.LeafOf(h)].Name
	}
	return ""
}

// memberKey identifies a membership: a plan is remade when it changes.
func memberKey(ms []liveplan.Member) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%s|%s|", m.Name, m.Group)
		for _, a := range m.Addrs {
			fmt.Fprintf(&b, "%s/%s/%d/%d;", a.Device, a.GID, a.LID, a.QPN)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// replan makes, commits and pushes a new plan when the membership changed,
// or adopts the committed one on a new leader. Windows stay aligned to the
// first plan's start, so a plan change does not reset the window count.
func (c *Coordinator) replan(ctx context.Context, members []liveplan.Member) error {
	if len(members) < 2 {
		return fmt.Errorf("live probing needs at least 2 workers with probe ports; %d have them", len(members))
	}
	key := memberKey(members)
	c.mesh.mu.Lock()
	cur, judged := c.mesh.plan, c.mesh.judged
	due := c.mesh.due(key, time.Now(), c.liveWindow()) || c.mesh.resteer && judged != nil
	c.mesh.mu.Unlock()
	if !due {
		return nil
	}
	id, start := uint64(1), time.Now().UTC()
	if cur != nil {
		id, start = cur.ID+1, cur.Start
	} else if w, ok := c.fsm.LivePlan(); ok {
		id, start = w.ID+1, w.Start // a new leader continues the committed plan's numbering and windows
	}
	pl, cov, err := liveplan.New(id, members, c.opts.Live.Params, start)
	if err != nil {
		return err
	}
	topo := c.Topology()
	links, unmatched, err := LiveLinks(topo, members)
	if err != nil {
		return err
	}
	traced := c.steerLiveLinks(ctx, topo, judged, links)
	resteer := len(links) > 0 && judged == nil && !c.opts.SkipTrace && topo.HasAddrs()
	if len(links) > 0 {
		if cov, err = pl.SetLinks(links); err != nil {
			return err
		}
		for _, u := range unmatched {
			c.log.Warn("live link flows: topology and workers disagree; planned on what matches", "what", u)
		}
	}
	entry := store.EncodeLivePlan(pl.Wire())
	if err := c.apply(entry); err != nil {
		return fmt.Errorf("commit live plan %d: %w", id, err)
	}
	body := entry[1:] // the raft entry is its type byte and the worker API's message
	c.mesh.mu.Lock()
	c.mesh.plan, c.mesh.cov, c.mesh.key, c.mesh.body, c.mesh.err, c.mesh.pending = pl, cov, key, body, "", ""
	c.mesh.traced, c.mesh.resteer = traced, resteer
	c.mesh.mu.Unlock()
	if len(links) > 0 {
		c.mesh.mx.SetLinkRouter(c.linkRouter(topo))
	}
	c.log.Info("live plan", "id", id, "members", len(members), "coverage", cov.Period, "max_rate", cov.MaxRate,
		"link_flows", cov.LinkFlows, "min_link_rate", cov.MinLinkRate)
	c.fanout(ctx, members, func(ctx context.Context, m liveplan.Member, api string) {
		c.pushPlan(ctx, api, planBody(pl, body, m.Name), m.Name)
	})
	return nil
}

// planBody is the plan as worker node takes it: with link flows, only its
// own (liveplan.Plan.WireFor); without, the committed body as it is.
func planBody(pl *liveplan.Plan, body []byte, node string) []byte {
	if len(pl.Links) == 0 {
		return body
	}
	return wire.LivePlanMsg.Append(nil, new(pl.WireFor(node)))
}

// due says whether to plan for membership key now: when it differs from
// the planned one and has held still for a step (workers registering one
// by one would otherwise each cost a plan, a raft entry and a push to
// every worker), or has churned for three windows. The caller holds mu.
func (m *mesh) due(key string, now time.Time, window time.Duration) bool {
	switch {
	case m.plan != nil && key == m.key:
		m.pending = ""
		return false
	case key == m.pending:
		return true
	case m.pending == "":
		m.pendingAt = now
	}
	m.pending = key
	return now.Sub(m.pendingAt) >= 3*window
}

// liveWindow is the plan's window length.
func (c *Coordinator) liveWindow() time.Duration { return c.opts.Live.Params.WithDefaults().Window }

func (c *Coordinator) pushPlan(ctx context.Context, apiAddr string, body []byte, node string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(apiAddr, "/v1/live/plan"), bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header["Content-Type"] = wireTypeHdr
	c.authorize(req)
	resp, err := c.client.Do(req)
	if err != nil {
		c.log.Debug("live plan push failed; retried at the next collection", "node", node, "err", err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		c.log.Warn("worker refused the live plan", "node", node, "status", resp.Status)
	}
}

// fanout runs f for every member with an API address, liveFanout at once.
func (c *Coordinator) fanout(ctx context.Context, ms []liveplan.Member, f func(context.Context, liveplan.Member, string)) {
	sem := make(chan struct{}, liveFanout)
	var wg sync.WaitGroup
	for _, m := range ms {
		n, ok := c.reg.get(m.Name)
		if !ok || n.APIAddr == "" {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() { // owned by this call: it waits for all of them
			defer func() { <-sem; wg.Done() }()
			f(ctx, m, n.APIAddr)
		}()
	}
	wg.Wait()
}

// collect asks every member for the windows it finished since the last
// collection, folds them, and re-pushes the plan to a worker that runs
// another one (it restarted, or missed the push).
func (c *Coordinator) collect(ctx context.Context, members []liveplan.Member) {
	c.mesh.mu.Lock()
	pl, body := c.mesh.plan, c.mesh.body
	c.mesh.mu.Unlock()
	if pl == nil {
		return
	}
	c.fanout(ctx, members, func(ctx context.Context, m liveplan.Member, apiAddr string) {
		c.mesh.mu.Lock()
		since, ok := c.mesh.since[m.Name]
		c.mesh.mu.Unlock()
		if !ok {
			since = -1
		}
		got, err := c.fetchSummaries(ctx, apiAddr, since)
		if err != nil {
			c.log.Debug("live collection failed", "node", m.Name, "err", err)
			return
		}
		sums := make([]liveplan.Summary, len(got.Summaries))
		for i, s := range got.Summaries {
			sums[i] = liveplan.SummaryFromWire(s)
		}
		c.mesh.mx.Fold(m.Name, sums)
		c.mesh.mu.Lock()
		c.mesh.since[m.Name], c.mesh.heard[m.Name] = got.Latest, time.Now()
		c.mesh.mu.Unlock()
		if got.PlanID != pl.ID {
			c.pushPlan(ctx, apiAddr, planBody(pl, body, m.Name), m.Name)
		}
	})
}

func (c *Coordinator) fetchSummaries(ctx context.Context, apiAddr string, since int64) (wire.LiveSummaries, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := c.getWorker(ctx, apiAddr, fmt.Sprintf("/v1/live/summaries?since=%d", since))
	if err != nil {
		return wire.LiveSummaries{}, err
	}
	defer resp.Body.Close()
	b, err := wire.ReadBody(resp.Body, 16<<20)
	if err != nil {
		return wire.LiveSummaries{}, err
	}
	if resp.StatusCode != http.StatusOK {
		if e, ok := wire.DecodeError(resp.Header.Get("Content-Type"), b); ok {
			return wire.LiveSummaries{}, e
		}
		return wire.LiveSummaries{}, fmt.Errorf("live summaries: %s", resp.Status)
	}
	return wire.LiveSummariesMsg.Decode(b)
}

// judge analyses the live matrix when a newer window arrived.
func (c *Coordinator) judge(nodes []matrix.Node) {
	latest := c.mesh.mx.Latest()
	c.mesh.mu.Lock()
	fresh := c.mesh.judged == nil || latest != c.mesh.judgedW
	c.mesh.mu.Unlock()
	if !fresh || latest < 0 {
		return
	}
	m := c.mesh.mx.Analyse(nodes, c.opts.Live.Thresholds)
	rails := c.mesh.mx.Rails()
	c.judgeLinks()
	c.mesh.mu.Lock()
	c.mesh.judged, c.mesh.judgedW, c.mesh.rails = m, latest, rails
	c.mesh.mu.Unlock()
}

func (c *Coordinator) setLiveErr(msg string) {
	c.mesh.mu.Lock()
	defer c.mesh.mu.Unlock()
	if c.mesh.err != msg && msg != "" {
		c.log.Warn("live probing", "problem", msg)
	}
	c.mesh.err = msg
}
