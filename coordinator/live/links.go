package live

import (
	"cmp"
	"slices"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/liveplan"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// The link watch judges the plan's steered link flows (liveplan.Link):
// each flow's probes cross a known set of cables there and back, so a
// cable that loses packets shows as loss in every flow through it while
// the flows through its sibling cables stay clean. Each judgement pools,
// per cable, the probes of the last few windows of every flow through it,
// names the cable that explains the most lost probes beyond what the
// fabric's background loss would give by chance, sets its flows aside,
// and repeats. A round trip cannot tell which way a cable drops: the
// cable is named, not its direction.
//
// What it names becomes an episode: opened the first time, kept through
// recoveries and relapses (each relapse a flap), closed once the cable
// has stayed clean for the quiet period. So a flapping cable is reported
// once, with its flap count, not once a window.

// LinkRouter tells the watch which links a link flow crosses; the
// coordinator's topology implements it. A link is one direction of a
// cable: links 2c and 2c+1 are cable c's two.
type LinkRouter interface {
	// FlowLinks appends the links that a probe from src's HCA on rail to
	// dst's with flow label crosses, and its answer crosses back, each
	// once; false when the topology lacks either end.
	FlowLinks(buf []int32, src, dst string, rail int, label uint32) ([]int32, bool)
	// HostLinks are the two links of node's HCA cable on rail (to its
	// leaf, and back) and that leaf; false when the topology lacks it.
	HostLinks(node string, rail int) (links [2]int32, leaf int32, ok bool)
	// CableName names a cable by its two ends for people.
	CableName(c int32) string
}

// LinkOptions tune the watch; zero fields take the defaults.
type LinkOptions struct {
	// Windows is how many of the newest windows are pooled (3): at the
	// plan's 8 probes/s a flow, a cable with two flows through it sees
	// ~1,000 probes, so 2 % loss loses ~20, never lost by chance.
	Windows int
	// MinLoss is the least share of its probes a cable must lose to be
	// named (0.005): below that, RDMA's retransmission hides it.
	MinLoss float64
	// P is how unlikely the cable's lost probes must be at the fabric's
	// background loss rate (1e-6): with tens of thousands of cables
	// judged every window, a looser bar names a clean cable every day.
	P float64
	// Quiet is how many windows a cable must stay clean before its
	// episode closes (30: five minutes of 10 s windows, the span
	// ByteRobust waits for a second alert before evicting).
	Quiet int64
	// MinLost is the fewest lost probes that name a cable (8). Fewer can
	// be significant and still point the wrong way: in the window a
	// fault begins, three or four lost probes may all fall on one host's
	// flows through the faulty cable, and that host's own cable, with
	// fewer clean flows through it, explains them better.
	MinLost int
	// Max bounds the cables named in one judgement (8).
	Max int
}

func (o LinkOptions) orDefaults() LinkOptions {
	o.Windows = min(cmp.Or(o.Windows, 3), maxLinkWindows)
	o.MinLoss = cmp.Or(o.MinLoss, 0.005)
	o.P = cmp.Or(o.P, 1e-6)
	o.Quiet = cmp.Or(o.Quiet, 30)
	o.MinLost = cmp.Or(o.MinLost, 8)
	o.Max = cmp.Or(o.Max, 8)
	return o
}

const (
	maxLinkWindows = 8
	// minBackground is the floor of the background loss rate: a fabric
	// that lost nothing yet must still need several lost probes.
	minBackground = 1e-4
	// downLoss: a cable losing this share is down, not lossy.
	downLoss = 0.9
)

// flowKey is one link flow: interned ends, rail and label.
type flowKey struct {
	src, dst uint32
	rail     int32
	label    uint32
}

type flowWindow struct {
	window         int64
	answered, lost int32
}

// windows are a flow's (or an HCA's) last windows, by window %
// maxLinkWindows.
type windows [maxLinkWindows]flowWindow

// at is window's slot, emptied when it held an older window; nil when a
// newer window holds it (a late summary).
func (ws *windows) at(window int64) *flowWindow {
	x := &ws[window%maxLinkWindows]
	if x.window != window {
		if x.window > window && (x.answered|x.lost) != 0 {
			return nil
		}
		*x = flowWindow{window: window}
	}
	return x
}

// counts is the probes over windows (from, to].
func (ws *windows) counts(from, to int64) (n, lost int) {
	for _, x := range ws {
		if x.window > from && x.window <= to {
			n += int(x.answered + x.lost)
			lost += int(x.lost)
		}
	}
	return n, lost
}

type flowRec struct {
	wins   windows
	links  []int32 // the directed links it crosses, there and back
	cables []int32 // their cables, each once
	routed string  // the router version links came from ("": not yet)
	known  bool    // the router knows both ends
}

// route asks r for the flow's links and derives its cables.
func (rec *flowRec) route(r LinkRouter, src, dst string, rail int, label uint32) {
	rec.links, rec.known = r.FlowLinks(rec.links[:0], src, dst, rail, label)
	rec.cables = rec.cables[:0]
	for _, l := range rec.links {
		if c := l >> 1; !slices.Contains(rec.cables, c) {
			rec.cables = append(rec.cables, c)
		}
	}
}

// episode is one cable's open trouble.
type episode struct {
	api.LiveLink
	bad bool // named or lossy in the newest judgement
}

// linkWatch is the link flows' state; Matrix holds one and locks it.
type linkWatch struct {
	opts  LinkOptions
	flows map[flowKey]*flowRec
	// hosts are each HCA's probes to its leaf mates, by its cable: each
	// crossed that cable both ways and no switch link, whatever the
	// switches' hash, so they are evidence about that cable alone.
	hosts map[int32]*windows
	// router and version are the newest judgement's: foldHosts places
	// leaf mates by them, and hosts is emptied when version changes.
	router   LinkRouter
	version  string
	episodes map[int32]*episode
	judged   int64 // the newest window judged; -1 = none
	latest   int64 // the newest window folded
}

func newLinkWatch(o LinkOptions) *linkWatch {
	return &linkWatch{opts: o.orDefaults(), flows: map[flowKey]*flowRec{}, hosts: map[int32]*windows{},
		episodes: map[int32]*episode{}, judged: -1, latest: -1}
}

// route makes r (of version) the watch's router; hosts, kept by cable,
// are emptied when the version changes.
func (w *linkWatch) route(r LinkRouter, version string) {
	if r != nil && (version != w.version || w.router == nil) {
		w.router, w.version = r, version
		clear(w.hosts) // their cables were another topology's
	}
}

// foldHosts adds an in-group summary's probes to both HCAs' windows when
// the topology has the two on one leaf: a switch group (a label) can be
// wider than a leaf, and probes between leaves cross switch links.
func (w *linkWatch) foldHosts(src, dst string, s liveplan.Summary) {
	if w.router == nil || s.Held || s.Answered+s.Lost == 0 {
		return
	}
	a, leafA, ok1 := w.router.HostLinks(src, s.Rail)
	b, leafB, ok2 := w.router.HostLinks(dst, s.Rail)
	if !ok1 || !ok2 || leafA != leafB {
		return
	}
	for _, c := range [2]int32{a[0] >> 1, b[0] >> 1} {
		h := w.hosts[c]
		if h == nil {
			h = &windows{}
			w.hosts[c] = h
		}
		if x := h.at(s.Window); x != nil { // a window sums the HCA's leaf mates
			x.answered += int32(min(s.Answered, 1<<20))
			x.lost += int32(min(s.Lost, 1<<20))
		}
	}
}

// fold keeps one link flow's window. A held window (a sweep paused the
// HCA) covers part of the window only and is left out.
func (w *linkWatch) fold(src, dst uint32, s liveplan.Summary) {
	if s.Held || s.Answered+s.Lost == 0 {
		return
	}
	k := flowKey{src, dst, int32(s.Rail), s.Label}
	r := w.flows[k]
	if r == nil {
		r = &flowRec{}
		w.flows[k] = r
	}
	x := r.wins.at(s.Window)
	if x == nil {
		return // a newer window already holds the slot
	}
	*x = flowWindow{window: s.Window, answered: int32(min(s.Answered, 1<<30)), lost: int32(min(s.Lost, 1<<30))} // a re-sent window counts once
	w.latest = max(w.latest, s.Window)
}

// cableTally is one cable's pooled probes in a judgement.
type cableTally struct {
	n, lost int
	flows   []int // indices into the judgement's flows that lost probes
}

type judgedFlow struct {
	key       flowKey
	rec       *flowRec
	n, lost   int
	explained bool
}

// judge names the cables of the windows up to latest and moves the
// episodes on; it returns the episodes opened and those closed.
func (w *linkWatch) judge(r LinkRouter, version string, names []string) (opened, closed []api.LiveLink) {
	latest := w.latest
	w.route(r, version)
	if latest < 0 || latest == w.judged || r == nil {
		return nil, nil
	}
	w.judged = latest
	from := latest - int64(w.opts.Windows)
	var fs []judgedFlow
	var pooledN, pooledLost int
	for k, rec := range w.flows {
		if rec.routed != version {
			rec.route(r, names[k.src], names[k.dst], int(k.rail), k.label)
			rec.routed = version
		}
		n, lost := rec.wins.counts(from, latest)
		if n == 0 {
			if newest := slices.MaxFunc(rec.wins[:], func(a, b flowWindow) int { return cmp.Compare(a.window, b.window) }); newest.window <= from-int64(w.opts.Quiet) {
				delete(w.flows, k) // no longer in the plan
			}
			continue
		}
		if !rec.known {
			continue
		}
		fs = append(fs, judgedFlow{key: k, rec: rec, n: n, lost: lost})
		if float64(lost) < w.opts.MinLoss*float64(n) {
			pooledN, pooledLost = pooledN+n, pooledLost+lost
		}
	}
	// Map order must not decide which of two equal cables is named.
	slices.SortFunc(fs, func(a, b judgedFlow) int {
		return cmp.Or(cmp.Compare(a.key.src, b.key.src), cmp.Compare(a.key.dst, b.key.dst), cmp.Compare(a.key.rail, b.key.rail), cmp.Compare(a.key.label, b.key.label))
	})
	bg := minBackground
	if pooledN > 0 {
		bg = max(bg, float64(pooledLost)/float64(pooledN))
	}
	named := map[int32]api.LiveLink{}
	for len(named) < w.opts.Max {
		l, t, ok := w.pick(fs, bg, from, latest)
		if !ok {
			break
		}
		c := l >> 1
		if l < 0 {
			c = ^l
		}
		if prev, ok := named[c]; ok { // its other direction, named before
			t.n, t.lost = max(t.n, prev.Probes), max(t.lost, prev.Lost)
		}
		partners := map[uint32]bool{}
		for _, i := range t.flows {
			fs[i].explained = true
			partners[fs[i].key.src], partners[fs[i].key.dst] = true, true
		}
		named[c] = api.LiveLink{Cable: r.CableName(c), Loss: float64(t.lost) / float64(t.n), Probes: t.n, Lost: t.lost,
			Flows: len(t.flows), Partners: len(partners)}
	}
	newest := w.newestTallies(fs, latest, named)
	return w.advance(named, newest, latest)
}

// pick is the link (a cable's direction, l >= 0) or cable (^c) that
// explains the most lost probes of the flows not yet explained, if any is
// both lossy enough and unlikely by chance. Both are candidates: a cable
// losing both ways loses the flows through each direction, which its
// cable's tally adds up; one losing one way loses every flow through that
// direction, while the flows through its other direction dilute its
// cable's share, and an HCA's own cable, whose flows all happen to cross
// the lossy direction, would explain them better than the cable.
func (w *linkWatch) pick(fs []judgedFlow, bg float64, from, to int64) (int32, cableTally, bool) {
	tallies := map[int32]*cableTally{}
	for i, f := range fs {
		if f.explained {
			continue
		}
		add := func(key int32) {
			t := tallies[key]
			if t == nil {
				t = &cableTally{}
				tallies[key] = t
			}
			t.n += f.n
			t.lost += f.lost
			if f.lost > 0 {
				t.flows = append(t.flows, i)
			}
		}
		for _, l := range f.rec.links {
			add(l)
		}
		for _, c := range f.rec.cables {
			add(^c)
		}
	}
	w.addHosts(tallies, from, to)
	var best int32
	var bt *cableTally
	for c, t := range tallies {
		// A candidate must explain some lost probe of a link flow: its
		// leaf mates' probes only weigh against it (and each pick must
		// set flows aside, or the judgement would not end).
		if len(t.flows) == 0 || t.lost < w.opts.MinLost || float64(t.lost) < w.opts.MinLoss*float64(t.n) || matrix.PoissonTail(t.lost, float64(t.n)*bg) >= w.opts.P {
			continue
		}
		if bt == nil || betterCable(c, t, best, bt) {
			best, bt = c, t
		}
	}
	if bt == nil {
		return 0, cableTally{}, false
	}
	return best, *bt, true
}

// addHosts adds each HCA's probes to its leaf mates to its own cable's
// tallies where link flows made them candidates: an HCA whose every link
// flow happens to cross one lossy switch link (a small fabric, two
// partners) explains their losses as well as that link does, unless the
// probes to its leaf mates, which crossed its cable and no switch link,
// came back.
func (w *linkWatch) addHosts(tallies map[int32]*cableTally, from, to int64) {
	for c, h := range w.hosts {
		n, lost := h.counts(from, to)
		if n == 0 {
			continue
		}
		for _, key := range [3]int32{2 * c, 2*c + 1, ^c} {
			if t := tallies[key]; t != nil {
				t.n += n
				t.lost += lost
			}
		}
	}
}

// betterCable: more lost probes explained, then a higher loss share (of
// two links on the same lossy flows, the one with fewer clean flows
// through it), then the lower index, so the choice never depends on map
// order.
func betterCable(c int32, t *cableTally, best int32, bt *cableTally) bool {
	if t.lost != bt.lost {
		return t.lost > bt.lost
	}
	if a, b := t.lost*bt.n, bt.lost*t.n; a != b {
		return a > b
	}
	return c < best
}

// newestTallies pools the newest window alone for the cables named now or
// with an open episode: what says down from lossy, and moves an episode
// between bad and recovered.
func (w *linkWatch) newestTallies(fs []judgedFlow, latest int64, named map[int32]api.LiveLink) map[int32]*cableTally {
	out := make(map[int32]*cableTally, len(w.episodes)+len(named))
	for c := range w.episodes {
		out[c] = &cableTally{}
	}
	for c := range named {
		out[c] = &cableTally{}
	}
	if len(out) == 0 {
		return out
	}
	for _, f := range fs {
		n, lost := f.rec.wins.counts(latest-1, latest)
		if n == 0 {
			continue
		}
		for _, c := range f.rec.cables {
			if t := out[c]; t != nil {
				t.n += n
				t.lost += lost
			}
		}
	}
	return out
}

// advance moves the episodes on by one judgement: a cable named without
// one opens one. An open episode turns recovered on a newest window whose
// probes through the cable all came back, and bad again (a flap) on one
// that lost a share of them; a window in between keeps its state, so a
// steadily lossy cable is not counted as flapping when one window happens
// to lose little. The pooled windows decide only what opens an episode:
// they still hold a recovered cable's bad windows.
func (w *linkWatch) advance(named map[int32]api.LiveLink, newest map[int32]*cableTally, latest int64) (opened, closed []api.LiveLink) {
	for c, l := range named {
		if t := newest[c]; t.n >= 10 { // the pooled windows may start before the onset
			l.Loss, l.Probes, l.Lost = float64(t.lost)/float64(t.n), t.n, t.lost
		}
		l.State = "lossy"
		if l.Loss >= downLoss {
			l.State = "down"
		}
		if w.episodes[c] != nil {
			continue // the newest window moves it on, below
		}
		l.Since, l.LastBad, l.Worst = latest, latest, l.Loss
		w.episodes[c] = &episode{LiveLink: l, bad: true}
		opened = append(opened, l)
	}
	for c, e := range w.episodes {
		if e.Since == latest {
			continue
		}
		t := newest[c]
		switch {
		case t == nil || t.n == 0:
		case t.lost == 0 && t.n >= 10:
			if e.bad {
				e.bad, e.State = false, "recovered"
			}
		case float64(t.lost) >= w.opts.MinLoss/2*float64(t.n) && t.lost >= 2:
			l := e.LiveLink
			if nl, ok := named[c]; ok {
				l.Flows, l.Partners = nl.Flows, nl.Partners
			}
			l.Loss, l.Probes, l.Lost = float64(t.lost)/float64(t.n), t.n, t.lost
			w.relapse(e, l, latest)
		}
		if (!e.bad || t == nil || t.n == 0) && latest-e.LastBad >= w.opts.Quiet {
			closed = append(closed, e.LiveLink)
			delete(w.episodes, c)
		}
	}
	return opened, closed
}

// relapse marks an open episode bad at latest, counting a flap when it
// had recovered.
func (w *linkWatch) relapse(e *episode, l api.LiveLink, latest int64) {
	if !e.bad {
		e.Flaps++
	}
	e.bad, e.LastBad = true, latest
	e.Loss, e.Probes, e.Lost, e.Flows, e.Partners = l.Loss, l.Probes, l.Lost, l.Flows, l.Partners
	e.Worst = max(e.Worst, l.Loss)
	e.State = "lossy"
	if l.Loss >= downLoss {
		e.State = "down"
	}
}

// links is the open episodes, the newest first.
func (w *linkWatch) links() []api.LiveLink {
	out := make([]api.LiveLink, 0, len(w.episodes))
	for _, e := range w.episodes {
		out = append(out, e.LiveLink)
	}
	slices.SortFunc(out, func(a, b api.LiveLink) int {
		return cmp.Or(cmp.Compare(b.LastBad, a.LastBad), cmp.Compare(b.Loss, a.Loss), cmp.Compare(a.Cable, b.Cable))
	})
	return out
}
