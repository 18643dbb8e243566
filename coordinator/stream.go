package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// Task streams (wire.StreamPath): over a real network the leader sends each
// worker its tasks as frames on a connection it keeps, not as a request per
// task. A stream carries one task at a time; a second task to the same
// worker while one runs opens a second stream.
const (
	// streamIdle closes a stream no task used for this long, well within
	// the worker's own idle bound (two minutes), so that the worker never
	// closes one just as a task is written on it.
	streamIdle = 60 * time.Second
	// streamsKept bounds the idle streams kept per worker.
	streamsKept = 2
	// streamRetry is how long a worker that refused a stream (one without
	// them, mid-upgrade) gets its tasks as requests before it is asked again.
	streamRetry = 5 * time.Minute
)

// streamer is a transport that says whether it carries task streams:
// the scale harness's in-process one does in control mode.
type streamer interface{ TaskStreams() bool }

// streams says whether tasks should go over task streams on rt: on a
// network's transport that speaks HTTP/1.1 only (HTTP/2 has no upgrade,
// and net/http refuses to send one there), or one that says it carries
// them.
func streams(rt http.RoundTripper) bool {
	if s, ok := rt.(streamer); ok {
		return s.TaskStreams()
	}
	t, tcp := rt.(*http.Transport)
	return tcp && !t.ForceAttemptHTTP2 && (t.Protocols == nil || !t.Protocols.HTTP2())
}

// taskStreams is one worker's streams.
type taskStreams struct {
	mu          sync.Mutex
	idle        []*taskStream
	noneUntil   time.Time // the worker refused a stream: post tasks until then
	floatsUntil time.Time // it refused StreamProto, not StreamProtoFloats: open those until then
	closed      bool      // the coordinator stopped: keep none
}

type taskStream struct {
	rwc  io.ReadWriteCloser
	seq  uint64
	used time.Time // when it last went idle
}

// take returns an idle stream, or nil; a stream that idled past streamIdle
// is closed rather than taken. refused: the worker serves no streams.
func (s *taskStreams) take(now time.Time) (st *taskStream, refused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Before(s.noneUntil) {
		return nil, true
	}
	for n := len(s.idle); n > 0; n = len(s.idle) {
		st := s.idle[n-1]
		s.idle = s.idle[:n-1]
		if now.Sub(st.used) < streamIdle {
			return st, false
		}
		st.rwc.Close()
	}
	return nil, false
}

// put keeps st for the next task, or closes it when enough are kept.
func (s *taskStreams) put(st *taskStream, now time.Time) {
	st.used = now
	s.mu.Lock()
	if !s.closed && len(s.idle) < streamsKept {
		s.idle = append(s.idle, st)
		st = nil
	}
	s.mu.Unlock()
	if st != nil {
		st.rwc.Close()
	}
}

// reap closes the streams idle since cutoff or before; all of them, and
// for good, when stop is set.
func (s *taskStreams) reap(cutoff time.Time, stop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = s.closed || stop
	kept := s.idle[:0]
	for _, st := range s.idle {
		if stop || !st.used.After(cutoff) {
			st.rwc.Close()
			continue
		}
		kept = append(kept, st)
	}
	clear(s.idle[len(kept):])
	s.idle = kept
}

func (s *taskStreams) refuse(until time.Time) {
	s.mu.Lock()
	s.noneUntil = until
	s.mu.Unlock()
}

// floats says whether streams open as StreamProtoFloats now; set, that
// they do until until.
func (s *taskStreams) floats(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return now.Before(s.floatsUntil)
}

func (s *taskStreams) useFloats(until time.Time) {
	s.mu.Lock()
	s.floatsUntil = until
	s.mu.Unlock()
}

// streamTask runs t on tt's worker over a stream. handled is false when the
// worker has no streams (or the transport cannot open one): the caller
// posts the task instead. ref is postTaskIn's.
func (c *Coordinator) streamTask(ref *taskRef, tt *taskTarget, timeout time.Duration, t *wire.Task, sc *phaseScratch, lats []probe.Latency, codes [][7]uint16) (res wire.TaskResult, perr *probe.Error, handled bool) {
	if !c.streaming {
		return res, nil, false
	}
	st, refused := tt.streams.take(time.Now())
	if refused {
		return res, nil, false
	}
	for {
		reused := st != nil
		if st == nil {
			var ok bool
			if st, ok, perr = c.openStream(ref, tt, t, timeout); !ok || perr != nil {
				return res, perr, ok
			}
		}
		raw, kind, kept, err := st.exchange(ref, t, &sc.enc)
		if err != nil {
			st.rwc.Close()
			if errors.Is(err, errStreamAnswer) {
				return res, &probe.Error{Class: probe.ClassInternal, Cause: fmt.Sprintf("worker %s: %v", t.Src, err),
					Fix: "coordinator and workers must run the same rdmamesh version"}, true
			}
			if reused && staleConn(err) && ref.cause() == nil {
				// The worker closed the idle stream as this task went out
				// (it restarted, or idled it out): it never answered, so
				// the task goes once more, on a new stream. Its other kept
				// streams are as old, and nothing reads an idle one to
				// notice: they go too.
				tt.streams.reap(time.Now(), false)
				st = nil
				continue
			}
			return res, c.taskFailure(ref.cause(), t, tt.addr, timeout, err), true
		}
		if kept {
			tt.streams.put(st, time.Now())
		}
		defer raw.Put() // the decoders copy what they keep
		if kind == wire.FrameError {
			if e, ok := wire.DecodeError(wire.ContentType, raw.B); ok {
				return res, e, true
			}
			return res, &probe.Error{Class: probe.ClassInternal, Cause: fmt.Sprintf("worker %s refused the task with an unreadable error", t.Src)}, true
		}
		res, perr = decodeAnswer(raw.B, t, sc, lats, codes)
		return res, perr, true
	}
}

// errStreamAnswer is a frame that is not the answer to the task sent.
var errStreamAnswer = errors.New("the task stream answered out of turn")

// exchange sends t and reads its answer. An error leaves the stream
// unusable; so does the task ending early, which has its tracking close
// the stream to end the read (kept false): an answer read in full by then
// still counts.
func (st *taskStream) exchange(ref *taskRef, t *wire.Task, enc *wire.TaskEncoder) (in *wire.Buf, kind byte, kept bool, err error) {
	if !ref.closeOnEnd(st.rwc) {
		st.rwc.Close()
		return nil, 0, false, ref.cause()
	}
	st.seq++
	out := wire.GetBuf()
	out.B = enc.Append(wire.BeginFrame(out.B), t)
	wire.EndFrame(out.B, wire.FrameTask, st.seq)
	_, err = st.rwc.Write(out.B)
	out.Put()
	in = wire.GetBuf()
	var seq uint64
	if err == nil {
		kind, seq, err = wire.ReadFrame(st.rwc, in, maxAnswer)
	}
	kept = ref.keepOpen()
	if err == nil && (seq != st.seq || kind != wire.FrameResult && kind != wire.FrameError) {
		err = errStreamAnswer
	}
	if err != nil {
		in.Put()
		return nil, 0, false, err
	}
	return in, kind, kept, nil
}

// openStream opens a stream to tt's worker. ok is false when the worker
// answered the upgrade with anything but a stream or an auth refusal: it
// does not serve them, and gets requests for streamRetry. A worker of the
// previous version refuses StreamProto as a bad request; it is asked for
// StreamProtoFloats at once, and opened so for streamRetry.
func (c *Coordinator) openStream(ref *taskRef, tt *taskTarget, t *wire.Task, timeout time.Duration) (*taskStream, bool, *probe.Error) {
	st, ok, perr, older := c.openStreamAs(ref, tt, t, timeout, tt.streams.floats(time.Now()))
	if older {
		tt.streams.useFloats(time.Now().Add(streamRetry))
		st, ok, perr, _ = c.openStreamAs(ref, tt, t, timeout, true)
	}
	return st, ok, perr
}

// openStreamAs is openStream asking for StreamProtoFloats (floats) or
// StreamProto; older: the worker refused StreamProto as a bad request.
func (c *Coordinator) openStreamAs(ref *taskRef, tt *taskTarget, t *wire.Task, timeout time.Duration, floats bool) (st *taskStream, ok bool, perr *probe.Error, older bool) {
	hdr := tt.streamHdr
	if floats {
		hdr = tt.streamHdrFloats
	}
	req := http.Request{Method: http.MethodPost, URL: tt.streamURL, Host: tt.url.Host, Header: hdr,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: http.NoBody}
	resp, err := c.roundTrip(req.WithContext(ref.context()))
	if err != nil {
		return nil, true, c.taskFailure(ref.cause(), t, tt.addr, timeout, err), false
	}
	if rwc, ok := wire.StreamOf(resp); ok {
		return &taskStream{rwc: rwc}, true, nil, false
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// Switched, but not to what was asked: the body is the bare
		// connection, which reading would wait on until the worker
		// idles it out. Closed unread, and the worker gets requests.
		resp.Body.Close()
		c.log.Info("worker switched to another protocol than the task stream asked for; posting its tasks", "worker", t.Src, "api", tt.addr,
			"asked", hdr.Get("Upgrade"), "got", resp.Header.Get("Upgrade"), "retry_in", streamRetry)
		tt.streams.refuse(time.Now().Add(streamRetry))
		return nil, false, nil, false
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		// The same refusal a task request would get, with its own fix.
		body, _ := wire.ReadBody(resp.Body, 64<<10)
		if e, ok := wire.DecodeError(resp.Header.Get("Content-Type"), body); ok {
			return nil, true, e, false
		}
		return nil, true, &probe.Error{Class: probe.ClassInternal, Cause: fmt.Sprintf("worker %s answered %s", t.Src, resp.Status)}, false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusBadRequest && !floats {
		return nil, false, nil, true
	}
	// Once per worker per streamRetry: a proxy that refuses upgrades costs
	// the leader about 1.7 times the CPU a task, which the operator should see.
	c.log.Info("worker serves no task streams; posting its tasks", "worker", t.Src, "api", tt.addr, "status", resp.Status, "retry_in", streamRetry)
	tt.streams.refuse(time.Now().Add(streamRetry))
	return nil, false, nil, false
}

// reapStreams closes the streams idle for streamIdle, every half of it,
// until ctx ends, and then every stream.
func (c *Coordinator) reapStreams(ctx context.Context) {
	tick := time.NewTicker(streamIdle / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			c.eachTarget(func(tt *taskTarget) { tt.streams.reap(time.Time{}, true) })
			return
		case now := <-tick.C:
			c.eachTarget(func(tt *taskTarget) { tt.streams.reap(now.Add(-streamIdle), false) })
		}
	}
}

func (c *Coordinator) eachTarget(f func(*taskTarget)) {
	c.targets.mu.RLock()
	defer c.targets.mu.RUnlock()
	for _, tt := range c.targets.m {
		f(tt)
	}
}
