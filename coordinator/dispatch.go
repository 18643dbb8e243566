package coordinator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/rdmamesh/rdmamesh/coordinator/sweep"
	"github.com/rdmamesh/rdmamesh/internal/member"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/selffault"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/matrix"
)

// workerDispatch is the sweep engine's Dispatcher: a phase is a task
// posted to the source worker's API, which runs src → dst and then hands
// the reverse to dst. Gossip says first whether either end is still there.
type workerDispatch struct{ c *Coordinator }

func (w workerDispatch) Phase(ctx context.Context, out []matrix.Cell, t sweep.Task) []matrix.Cell {
	c, id, round, spec, src, dst := w.c, t.SweepID, t.Round, t.Spec, t.Src, t.Dst
	info := c.reg.pair(id, t.SrcIndex, src.Name, t.DstIndex, dst.Name)
	for i, name := range [2]string{src.Name, dst.Name} {
		if st := info.state[i]; !info.ok[i] || st == "dead" || st == "left" {
			return failPhase(out, t, &probe.Error{Class: probe.ClassPeerLost,
				Cause: fmt.Sprintf("worker %s is %s in gossip", name, orUnknown(st)),
				Fix:   fmt.Sprintf("check the host %s and its rdmamesh worker service (systemctl status rdmamesh-worker, or the pod)", name)})
		}
	}
	srcAPI, dstAPI := info.api[0], info.api[1]
	// The task and the answer's rails are built in a reused scratch: the
	// cells keep their figures, never the rails, and nothing keeps the
	// task once it is encoded.
	sc := phaseScratches.Get().(*phaseScratch)
	defer phaseScratches.Put(sc)
	// The worker must answer before our own deadline so a slow test comes
	// back as its own classified cells rather than a blanket timeout. Each
	// direction keeps the pair timeout it had as a task of its own.
	now, timeout := time.Now(), spec.PairTimeout
	task := &sc.task
	*task = wire.Task{SweepID: id, Round: round, Src: src.Name, Dst: dst.Name,
		DstAPI: dstAPI, SrcAPI: srcAPI, Rails: t.Rails, Params: spec.Params,
		Deadline: now.Add(spec.PairTimeout * 9 / 10)}
	if len(t.Reverse) > 0 {
		sc.rev = wire.ReverseTask{Rails: t.Reverse, Deadline: now.Add(spec.PairTimeout * 18 / 10)}
		task.Reverse = &sc.rev
		timeout *= 2
	}
	if c.opts.Token != "" {
		// The tickets are the scratch's bytes: the task is encoded, and
		// forgotten, before the scratch goes back to its pool.
		sign := sc.signer(c.opts.Token)
		task.Ticket = sign.SignInto(&sc.tickets[0], id, src.Name, dst.Name, task.Deadline)
		if task.Reverse != nil {
			task.Reverse.Ticket = sign.SignInto(&sc.tickets[1], id, dst.Name, src.Name, task.Reverse.Deadline)
		}
	}
	tracked := c.inflight.begin(ctx, timeout, src.Name, dst.Name)
	defer tracked.done()
	// The answer's figures are decoded into the scratch, and only the
	// cells that are not lite keep theirs, in the round's room: a lite
	// cell's 78 bytes of figures and codes, written to the room, were read
	// by nobody.
	res, err := c.postTaskIn(&tracked, srcAPI, c.cachedTarget(info.target, srcAPI), spec.PairTimeout, task, sc, sc.lats[:], sc.codes[:])
	if err != nil {
		return failPhase(out, t, err)
	}
	c.counts.note(id, round, src.Name, res.Rails)
	lite, keep := liteRoom{t.Lite, t.SrcIndex, t.DstIndex}, figKeep{t.Figures, t.Codes, len(t.Rails) + len(t.Reverse)}
	out = resultCells(out, lite, &keep, src.Name, dst.Name, round, t.Rails, res.Rails, res.Tester)
	if len(t.Reverse) == 0 {
		return out
	}
	if res.Reverse == nil {
		return append(out, sweep.FailCells(dst.Name, src.Name, round, t.Reverse, &probe.Error{Class: probe.ClassInternal,
			Cause: fmt.Sprintf("worker %s returned no result for the reverse direction from %s", src.Name, dst.Name),
			Fix:   "run the same rdmamesh version on every node"})...)
	}
	c.counts.note(id, round, dst.Name, res.Reverse.Rails)
	lite.src, lite.dst = lite.dst, lite.src
	return resultCells(out, lite, &keep, dst.Name, src.Name, round, t.Reverse, res.Reverse.Rails, res.Reverse.Tester)
}

// phaseScratch is where Phase builds a task, signs its tickets, encodes
// it (the encoder keeps the last rails section it wrote) and decodes its
// answer: its reverse half and 64 rails, both halves of a task on up to
// 32 rails.
type phaseScratch struct {
	task    wire.Task
	rev     wire.ReverseTask
	enc     wire.TaskEncoder
	rails   []wire.RailResult
	back    wire.ReverseResult
	sign    *probe.TicketSigner
	tickets [2]probe.TicketBuf
	lats    [64]probe.Latency
	codes   [64][7]uint16
}

// signer is the scratch's ticket signer for token, keyed once.
func (sc *phaseScratch) signer(token string) *probe.TicketSigner {
	if sc.sign == nil || !sc.sign.Keyed(token) {
		sc.sign = probe.NewTicketSigner([]byte(token))
	}
	return sc.sign
}

var phaseScratches = sync.Pool{New: func() any { return &phaseScratch{rails: make([]wire.RailResult, 0, 64)} }}

// failPhase gives every rail of both directions of t the same failure.
func failPhase(out []matrix.Cell, t sweep.Task, e *probe.Error) []matrix.Cell {
	out = append(out, sweep.FailCells(t.Src.Name, t.Dst.Name, t.Round, t.Rails, e)...)
	return append(out, sweep.FailCells(t.Dst.Name, t.Src.Name, t.Round, t.Reverse, e)...)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// liteRoom is where a direction's plain cells go (sweep.Task.Lite; nil:
// none do), and its two ends' positions in the sweep's nodes.
type liteRoom struct {
	cells    *[]sweep.LiteCell
	src, dst int
}

// take adds rr as a lite cell on rail when it is a plain one: ok, latency
// alone, as codes, on the same rail at both ends of a direction whose ends
// the sweep's nodes list.
func (l liteRoom) take(rp probe.RailPair, rr *wire.RailResult) bool {
	if l.cells == nil || l.src < 0 || l.dst < 0 || l.src == l.dst || l.src > math.MaxInt32 || l.dst > math.MaxInt32 ||
		rr.Class != probe.ClassOK || rr.Error != nil || rr.Bandwidth != nil || rr.Latency == nil || rr.LatencyQ == nil ||
		rp.Dst.Rail != rp.Rail || rp.Rail < 0 || rp.Rail > math.MaxUint16 || rr.Latency.Samples < 0 || rr.Latency.Samples > math.MaxUint32 ||
		len(*l.cells) == cap(*l.cells) {
		return false
	}
	*l.cells = append(*l.cells, sweep.LiteCell{Src: int32(l.src), Dst: int32(l.dst), Rail: uint16(rp.Rail), Flow: rr.Flow,
		BackFlow: rr.BackFlow, Samples: uint32(rr.Latency.Samples), Codes: *rr.LatencyQ})
	return true
}

// figKeep is where the cells a phase appends keep their latency figures
// and codes: the round's room (sweep.Task.Figures and Codes), or room of
// their own for the phase's rails (rails) when there is none (a pair past
// its room: every cross-rail link).
type figKeep struct {
	lats  []probe.Latency
	codes [][7]uint16
	rails int
}

// keep copies rr's figures and codes, which point into a scratch, to
// where a cell may keep them.
func (f *figKeep) keep(rr *wire.RailResult) (*probe.Latency, *[7]uint16) {
	if rr.Latency == nil {
		return nil, nil
	}
	if len(f.lats) == 0 || len(f.codes) == 0 {
		n := max(f.rails, 1)
		f.lats, f.codes, f.rails = make([]probe.Latency, n), make([][7]uint16, n), 0
	}
	l, q := &f.lats[0], &f.codes[0]
	f.lats, f.codes = f.lats[1:], f.codes[1:]
	*l = *rr.Latency
	if rr.LatencyQ == nil {
		return l, nil
	}
	*q = *rr.LatencyQ
	return l, q
}

// resultCells appends a worker's answer for src → dst, mapped onto the
// rails asked for, to out, or to lite when a rail's cell is a plain one;
// a rail the worker left out is an internal error, never a silent gap.
// The cells' figures go to figs: the answer's are in a scratch.
func resultCells(out []matrix.Cell, lite liteRoom, figs *figKeep, src, dst string, round int, asked []probe.RailPair, got []wire.RailResult, tester *probe.Error) []matrix.Cell {
	for i, rp := range asked {
		rr := railResult(got, i, rp.Rail)
		if rr == nil || rr.Class == "" {
			e := &probe.Error{Class: probe.ClassInternal, Cause: fmt.Sprintf("worker %s returned no result for rail %d", src, rp.Rail),
				Fix: "run the same rdmamesh version on every node"}
			out = append(out, sweep.FailCells(src, dst, round, []probe.RailPair{rp}, e)...)
			continue
		}
		if tester == nil && lite.take(rp, rr) {
			continue
		}
		// Built where it goes: a cell is 160 bytes, a million a sweep.
		out = append(out, sweep.CellFor(src, dst, round, rp))
		c := &out[len(out)-1]
		if tester != nil {
			// The worker ran short of its own resources during the task:
			// even a measured rail is not evidence (roundRunner stops).
			c.Class, c.Error = probe.ClassTester, tester
			continue
		}
		c.Class, c.Error, c.Bandwidth, c.Flow, c.BackFlow = rr.Class, rr.Error, rr.Bandwidth, rr.Flow, rr.BackFlow
		c.Latency, c.LatencyCodes = figs.keep(rr)
	}
	return out
}

// postTask runs t on the worker at apiAddr, tracked as Phase tracks its
// tasks: it ends at the pair timeout (timeout), when ctx ends or when
// either end is declared dead.
func (c *Coordinator) postTask(ctx context.Context, apiAddr string, timeout time.Duration, t wire.Task) (wire.TaskResult, *probe.Error) {
	ref := c.inflight.begin(ctx, timeout, t.Src, t.Dst)
	defer ref.done()
	return c.postTaskIn(&ref, apiAddr, nil, timeout, &t, &phaseScratch{}, nil, nil)
}

// postTaskIn is postTask decoding the answer's rails and reverse half
// into sc, and their latency figures into lats and codes (in step), each
// when it has room (wire.DecodeAnswer); tt is apiAddr's task target, nil
// to look it up.
// ref is the task's tracking (inflight.begin), whose context is made only
// if the task needs one: a task on a stream does not.
func (c *Coordinator) postTaskIn(ref *taskRef, apiAddr string, tt *taskTarget, timeout time.Duration, t *wire.Task, sc *phaseScratch, lats []probe.Latency, codes [][7]uint16) (wire.TaskResult, *probe.Error) {
	var res wire.TaskResult
	if tt == nil {
		var err error
		if tt, err = c.taskTarget(apiAddr); err != nil {
			return res, probe.Classify(err)
		}
	}
	if res, perr, ok := c.streamTask(ref, tt, timeout, t, sc, lats, codes); ok {
		return res, perr
	}
	ctx := ref.context()
	resp, err := c.roundTrip(c.taskRequest(ctx, tt, t, &sc.enc))
	if err != nil && staleConn(err) && ctx.Err() == nil {
		// A kept-alive connection the worker had just closed: net/http
		// retries no POST whose body it cannot rewind, and a pooled body
		// cannot be (its buffer is gone). The worker never answered, so
		// the task is sent once more on a new connection.
		resp, err = c.roundTrip(c.taskRequest(ctx, tt, t, &sc.enc))
	}
	if err != nil {
		return res, c.taskFailure(ref.cause(), t, apiAddr, timeout, err)
	}
	defer resp.Body.Close()
	raw, err := wire.ReadBuf(resp.Body, resp.ContentLength, maxAnswer)
	if err != nil {
		return res, &probe.Error{Class: probe.ClassPeerLost, Cause: fmt.Sprintf("worker %s: reading the answer: %v", t.Src, err)}
	}
	// The decoders copy what they keep, so the buffer goes back when
	// postTask returns.
	defer raw.Put()
	if resp.StatusCode != http.StatusOK {
		if e, ok := wire.DecodeError(resp.Header.Get("Content-Type"), raw.B); ok {
			return res, e
		}
		return res, &probe.Error{Class: probe.ClassInternal, Cause: fmt.Sprintf("worker %s answered %s", t.Src, resp.Status)}
	}
	return decodeAnswer(raw.B, t, sc, lats, codes)
}

// decodeAnswer reads a worker's answer to t, posted or streamed, into sc's
// room, lats and codes (postTaskIn).
func decodeAnswer(b []byte, t *wire.Task, sc *phaseScratch, lats []probe.Latency, codes [][7]uint16) (wire.TaskResult, *probe.Error) {
	res, err := wire.DecodeAnswer(b, wire.AnswerRoom{Task: t, Rails: sc.rails, Lats: lats, Codes: codes, Reverse: &sc.back})
	if err != nil {
		return res, &probe.Error{Class: probe.ClassInternal, Cause: fmt.Sprintf("worker %s: bad task result: %v", t.Src, err)}
	}
	return res, nil
}

// taskFailure classifies a task that got no answer from the worker at
// apiAddr: the coordinator's own resources, a peer gossip declared dead,
// the pair timeout (cause: why the task ended early), or a worker that
// cannot be reached.
func (c *Coordinator) taskFailure(cause error, t *wire.Task, apiAddr string, timeout time.Duration, err error) *probe.Error {
	if selffault.Note("connecting to worker "+t.Src, err) {
		ev, _ := selffault.Last()
		return &probe.Error{Class: probe.ClassTester, Cause: ev.Cause("the coordinator"), Fix: ev.Fix()}
	}
	if dead, ok := deadCause(cause); ok {
		return &probe.Error{Class: probe.ClassPeerLost, Cause: dead.Error(),
			Fix: fmt.Sprintf("check the host %s and its rdmamesh worker service", dead.node)}
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return &probe.Error{Class: probe.ClassTimeout,
			Cause: fmt.Sprintf("worker %s did not finish the test within the pair timeout %s (per direction)", t.Src, timeout),
			Fix:   fmt.Sprintf("a hung test or an overloaded host: check the worker on %s and %s; raise coordinator.pair_timeout only if the fabric is known to be slow", t.Src, t.Dst)}
	}
	return probe.Unreachable(c.gossipAlive(t.Src), t.Src, apiAddr, "the coordinator", err)
}

// staleConn says whether a task failed on a connection the worker closed
// under it before answering (broken pipe, reset, EOF on a kept-alive
// connection), which a second try on a fresh one gets past. A worker that
// is really gone refuses that try, and is reported as before.
func staleConn(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// railResult finds a rail's answer, nil when there is none. Workers answer
// the rails in the order asked, so the answer at the position asked (at)
// is looked at first; otherwise a scan, which beats building a map for
// the handful of rails a task has.
func railResult(rs []wire.RailResult, at, rail int) *wire.RailResult {
	if at < len(rs) && rs[at].Rail == rail {
		return &rs[at]
	}
	for i := range rs {
		if rs[i].Rail == rail {
			return &rs[i]
		}
	}
	return nil
}

// roundTrip sends a task straight through the transport: a task never
// redirects and carries its own deadline, and http.Client's per-request
// header copying and bookkeeping were a visible share of the leader's CPU
// at a million tasks per sweep.
func (c *Coordinator) roundTrip(req *http.Request) (*http.Response, error) {
	return c.client.Transport.RoundTrip(req)
}

func (c *Coordinator) authorize(req *http.Request) { c.authorizeHeader(req.Header) }

// authorizeHeader adds the bearer token, if there is one, to h.
func (c *Coordinator) authorizeHeader(h http.Header) {
	if c.opts.Token != "" {
		h.Set("Authorization", "Bearer "+c.opts.Token)
	}
}

// url is a worker's or a coordinator's API URL.
func (c *Coordinator) url(addr, path string) string {
	return member.URL(c.opts.ClientTLS != nil, addr, path)
}

// workerTransport is the transport for worker API calls. One leader talks to
// every worker once per round, so an idle connection is kept per worker (a
// round must not pay a TCP handshake per task) and no more: the leader's
// descriptors then grow with the workers, not with the rounds
// (descriptorsNeeded), and connections to workers that left time out.
func workerTransport(rt http.RoundTripper, tc *tls.Config) http.RoundTripper {
	if rt != nil {
		return rt
	}
	// The idle timeout stays below the worker's (2 min, worker/inproc.go):
	// with equal ones a worker could close a connection just as a task is
	// written on it, and a reset POST is not retried (seen once in a
	// 512-node demo as a peer-lost cell).
	return &http.Transport{MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second, TLSClientConfig: tc}
}

// gossipAlive says whether a worker whose API the coordinator cannot dial
// is alive all the same (member.Liveness): its test did not run, and the
// fault is the control network's.
func (c *Coordinator) gossipAlive(name string) bool { return c.live.Answers(name) }
