package coordinator

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// streamWorker is a worker API over real HTTP: POST /v1/tasks answered by
// fakeWorker, and task streams (unless noStreams) answered the same way;
// answer, when set, answers stream tasks instead.
type streamWorker struct {
	srv       *httptest.Server
	streams   wire.StreamServer
	opens     atomic.Int64 // stream openings that reached the handler
	posts     atomic.Int64
	token     string
	noStreams bool
	answer    wire.StreamAnswer
	wrap      func(http.Handler) http.Handler // in front of the API, when set
}

func newStreamWorker(t *testing.T, w *streamWorker) *streamWorker {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/tasks", func(rw http.ResponseWriter, r *http.Request) {
		w.posts.Add(1)
		resp, _ := fakeWorker{token: w.token}.RoundTrip(r)
		rw.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		rw.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(rw, resp.Body)
	})
	if !w.noStreams {
		mux.HandleFunc("POST "+wire.StreamPath, func(rw http.ResponseWriter, r *http.Request) {
			if w.token != "" && r.Header.Get("Authorization") != "Bearer "+w.token {
				wire.WriteError(rw, http.StatusUnauthorized, &probe.Error{Class: probe.ClassInternal, Cause: "missing or wrong bearer token"})
				return
			}
			w.opens.Add(1)
			answer := w.answer
			if answer == nil {
				answer = fakeAnswer
			}
			w.streams.Serve(rw, r, answer)
		})
	}
	var h http.Handler = mux
	if w.wrap != nil {
		h = w.wrap(mux)
	}
	w.srv = httptest.NewServer(h)
	t.Cleanup(func() { w.streams.Close(); w.srv.Close() })
	return w
}

func (w *streamWorker) addr() string { return strings.TrimPrefix(w.srv.URL, "http://") }

// switchTo takes rw's connection over and answers 101 to proto, as a
// worker's stream server does, for a test's own stream end.
func switchTo(rw http.ResponseWriter, proto string) (net.Conn, *bufio.ReadWriter, bool) {
	conn, brw, err := rw.(http.Hijacker).Hijack()
	if err != nil {
		return nil, nil, false
	}
	if _, err := brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + proto + "\r\n\r\n"); err != nil || brw.Flush() != nil {
		conn.Close()
		return nil, nil, false
	}
	return conn, brw, true
}

// fakeAnswer is fakeWorker's answer as a stream frame.
func fakeAnswer(_ context.Context, task, out []byte, codes bool) ([]byte, byte) {
	t, err := wire.TaskMsg.Decode(task)
	if err != nil {
		return wire.ErrorMsg.Append(out, &probe.Error{Class: probe.ClassInternal, Cause: err.Error()}), wire.FrameError
	}
	if t.Src == "busy" {
		return wire.ErrorMsg.Append(out, &probe.Error{Class: probe.ClassResource, Cause: "busy with " + t.Src}), wire.FrameError
	}
	res := wire.TaskResult{SweepID: t.SweepID, Round: t.Round, Src: t.Src, Dst: t.Dst}
	for _, rp := range t.Rails {
		res.Rails = append(res.Rails, wire.RailResult{Rail: rp.Rail, SrcDevice: rp.Src.Device, Class: probe.ClassOK,
			Latency: &probe.Latency{Samples: 1, P50Ns: float64(1000 + rp.Rail)}})
	}
	return wire.ResultCodec(codes).Append(out, &res), wire.FrameResult
}

func streamCoordinator(t *testing.T, token string) *Coordinator {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := &Coordinator{client: &http.Client{Transport: tr}, streaming: true, opts: Options{Token: token},
		log: slog.New(slog.DiscardHandler), inflight: newInflight()}
	t.Cleanup(func() { c.eachTarget(func(tt *taskTarget) { tt.streams.reap(time.Time{}, true) }) })
	return c
}

var streamTaskOf = func(src string) wire.Task {
	return wire.Task{SweepID: "s", Round: 7, Src: src, Dst: "b",
		Rails: []probe.RailPair{{Rail: 0, Src: probe.Endpoint{Device: "mlx5_0"}}, {Rail: 1, Src: probe.Endpoint{Device: "mlx5_1"}}}}
}

func checkAnswer(t *testing.T, res wire.TaskResult, perr *probe.Error) {
	t.Helper()
	if perr != nil {
		t.Fatalf("error %+v", perr)
	}
	if len(res.Rails) != 2 || res.Rails[1].Latency.P50Ns != 1001 || res.Rails[1].Class != probe.ClassOK || res.Src != "a" || res.Round != 7 {
		t.Fatalf("result %+v", res)
	}
}

// Tasks to one worker go over one stream, the worker's refusals included;
// none is posted.
func TestStreamTasks(t *testing.T) {
	for _, token := range []string{"", "tok"} {
		w := newStreamWorker(t, &streamWorker{token: token})
		c := streamCoordinator(t, token)
		for range 3 {
			// Each task's context ends with it, as Phase's does: the stream
			// outlives the context it was opened with.
			ctx, cancel := context.WithCancel(context.Background())
			res, perr := c.postTask(ctx, w.addr(), time.Minute, streamTaskOf("a"))
			cancel()
			checkAnswer(t, res, perr)
			if _, perr = c.postTask(context.Background(), w.addr(), time.Minute, streamTaskOf("busy")); perr == nil || perr.Class != probe.ClassResource || perr.Cause != "busy with busy" {
				t.Fatalf("refused task: %+v, want the worker's resource error", perr)
			}
		}
		if o, p := w.opens.Load(), w.posts.Load(); o != 1 || p != 0 {
			t.Fatalf("token %q: %d streams opened and %d tasks posted, want 1 and 0", token, o, p)
		}
	}
}

// A worker without streams (an older version) gets its tasks posted, and
// is not asked for a stream again on every task.
func TestStreamFallsBackToRequests(t *testing.T) {
	w := newStreamWorker(t, &streamWorker{noStreams: true})
	c := streamCoordinator(t, "")
	for range 3 {
		res, perr := c.postTask(context.Background(), w.addr(), time.Minute, streamTaskOf("a"))
		checkAnswer(t, res, perr)
	}
	tt, _ := c.taskTarget(w.addr())
	_, now := tt.streams.take(time.Now())
	_, later := tt.streams.take(time.Now().Add(streamRetry))
	if p := w.posts.Load(); p != 3 || !now || later {
		t.Fatalf("%d tasks posted, want 3, and streams tried again after %s", p, streamRetry)
	}
}

// A stream refused for the token fails the task with the worker's cause,
// as a task request would.
func TestStreamWrongToken(t *testing.T) {
	w := newStreamWorker(t, &streamWorker{token: "right"})
	c := streamCoordinator(t, "wrong")
	_, perr := c.postTask(context.Background(), w.addr(), time.Minute, streamTaskOf("a"))
	if perr == nil || !strings.Contains(perr.Cause, "bearer token") {
		t.Fatalf("error %+v, want the token refusal", perr)
	}
	if w.posts.Load() != 0 {
		t.Fatal("a task refused for its token was posted again")
	}
}

// A stream the worker closed while it idled is noticed when the next task
// goes out; that task goes again on a new stream.
func TestStreamReopensAClosedStream(t *testing.T) {
	w := newStreamWorker(t, &streamWorker{})
	w.streams.Idle = 50 * time.Millisecond
	c := streamCoordinator(t, "")
	res, perr := c.postTask(context.Background(), w.addr(), time.Minute, streamTaskOf("a"))
	checkAnswer(t, res, perr)
	wait.For(t, "the worker to close the idle stream", func() bool { return w.streams.Open() == 0 })
	res, perr = c.postTask(context.Background(), w.addr(), time.Minute, streamTaskOf("a"))
	checkAnswer(t, res, perr)
	if o := w.opens.Load(); o != 2 {
		t.Fatalf("%d streams opened, want 2", o)
	}
}

// A task that outlives the pair timeout, or whose peer dies, ends as the
// posted ones do; its stream, which may yet carry the late answer, is
// not used again, and the worker's task ends with it. The task's tracking
// closes the stream: Phase's (postTaskIn) or postTask's own.
func TestStreamTaskEnds(t *testing.T) {
	for _, viaPostTask := range []bool{false, true} {
		hang, ended := make(chan struct{}), make(chan struct{}, 1)
		var atWorker atomic.Pointer[func()] // what happens once the task is at the worker
		w := newStreamWorker(t, &streamWorker{answer: func(ctx context.Context, task, out []byte, codes bool) ([]byte, byte) {
			if f := atWorker.Load(); f != nil {
				(*f)()
			}
			select {
			case <-hang:
			case <-ctx.Done():
				ended <- struct{}{}
			}
			return fakeAnswer(ctx, task, out, codes)
		}})
		c := streamCoordinator(t, "")
		run := func(timeout time.Duration) (perr *probe.Error) {
			task := streamTaskOf("a")
			if viaPostTask {
				_, perr = c.postTask(context.Background(), w.addr(), timeout, task)
			} else {
				ref := c.inflight.begin(context.Background(), timeout, "a", "b")
				_, perr = c.postTaskIn(&ref, w.addr(), nil, timeout, &task, &phaseScratch{}, nil, nil)
				ref.done()
			}
			select {
			case <-ended:
			case <-time.After(10 * time.Second):
				t.Fatalf("postTask %v: the worker still runs a task whose stream the coordinator closed", viaPostTask)
			}
			return perr
		}
		// The deadline passes once the task is at the worker: a deadline
		// of a millisecond could pass before the task was sent, on a
		// loaded machine, and then no worker task would end.
		timeout := func() {
			c.inflight.mu.Lock()
			defer c.inflight.mu.Unlock()
			for i := range c.inflight.tasks {
				if t := &c.inflight.tasks[i]; t.live && !t.deadline.IsZero() {
					t.deadline = time.Now()
				}
			}
		}
		atWorker.Store(&timeout)
		if perr := run(time.Hour); perr == nil || perr.Class != probe.ClassTimeout {
			t.Fatalf("postTask %v: hung worker: %+v, want a timeout", viaPostTask, perr)
		}
		dead := func() { c.inflight.nodeDead("b") }
		atWorker.Store(&dead)
		if perr := run(time.Hour); perr == nil || perr.Class != probe.ClassPeerLost || !strings.Contains(perr.Cause, "worker b dead") {
			t.Fatalf("postTask %v: dead peer: %+v, want peer-lost", viaPostTask, perr)
		}
		if o := w.opens.Load(); o != 2 {
			t.Fatalf("postTask %v: %d streams opened, want 2 (none reused after a task ended early)", viaPostTask, o)
		}
		close(hang)
	}
}

// When the worker has closed every kept stream (it restarted, or idled
// them out), the first task to find one stale closes the others and goes
// on a new stream; no task fails.
func TestStreamReopensAfterTwoStaleStreams(t *testing.T) {
	release := make(chan struct{})
	var held atomic.Int64
	w := newStreamWorker(t, &streamWorker{answer: func(ctx context.Context, task, out []byte, codes bool) ([]byte, byte) {
		if held.Add(1) <= 2 {
			<-release // the first two tasks overlap, so two streams are kept
		}
		return fakeAnswer(ctx, task, out, codes)
	}})
	w.streams.Idle = 100 * time.Millisecond
	c := streamCoordinator(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := make(chan *probe.Error, 2)
	for range 2 {
		go func() {
			res, perr := c.postTask(ctx, w.addr(), time.Minute, streamTaskOf("a"))
			if perr == nil && len(res.Rails) != 2 {
				perr = &probe.Error{Cause: "short answer"}
			}
			errs <- perr
		}()
	}
	wait.For(t, "both tasks at the worker", func() bool { return held.Load() == 2 })
	close(release)
	for range 2 {
		if perr := <-errs; perr != nil {
			t.Fatal(perr)
		}
	}
	wait.For(t, "the worker to close both idle streams", func() bool { return w.streams.Open() == 0 })
	res, perr := c.postTask(ctx, w.addr(), time.Minute, streamTaskOf("a"))
	checkAnswer(t, res, perr)
	if o := w.opens.Load(); o != 3 {
		t.Fatalf("%d streams opened, want 3", o)
	}
}

// Streams go only where an upgrade can: not over an HTTP/2 transport, nor
// an in-process one that does not say it carries them.
func TestStreamsOnlyOverHTTP1(t *testing.T) {
	h2 := &http.Transport{Protocols: new(http.Protocols)}
	h2.Protocols.SetHTTP1(true)
	h2.Protocols.SetHTTP2(true)
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
		want bool
	}{
		{"net/http's transport", &http.Transport{}, true},
		{"one forced to try HTTP/2", &http.Transport{ForceAttemptHTTP2: true}, false},
		{"one with HTTP/2 among its protocols", h2, false},
		{"an in-process one", fakeWorker{}, false},
		{"an in-process one with streams", streamsSaid(true), true},
		{"an in-process one without", streamsSaid(false), false},
	} {
		if got := streams(tc.rt); got != tc.want {
			t.Errorf("%s: streams %v, want %v", tc.name, got, tc.want)
		}
	}
}

type streamsSaid bool

func (s streamsSaid) RoundTrip(*http.Request) (*http.Response, error) { return nil, io.EOF }
func (s streamsSaid) TaskStreams() bool                               { return bool(s) }

// An answer with another task's sequence number is never taken for this
// task's.
func TestStreamAnswerOutOfTurn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		conn, brw, ok := switchTo(rw, wire.StreamProto)
		if !ok {
			return
		}
		defer conn.Close()
		in := wire.GetBuf()
		kind, seq, err := wire.ReadFrame(bufio.NewReader(brw), in, 1<<20)
		if err != nil || kind != wire.FrameTask {
			return
		}
		b, k := fakeAnswer(r.Context(), in.B, wire.BeginFrame(nil), true)
		wire.EndFrame(b, k, seq+1)
		_, _ = conn.Write(b)
		_, _ = io.Copy(io.Discard, conn)
	}))
	defer srv.Close()
	c := streamCoordinator(t, "")
	_, perr := c.postTask(context.Background(), strings.TrimPrefix(srv.URL, "http://"), time.Minute, streamTaskOf("a"))
	if perr == nil || perr.Class != probe.ClassInternal || !strings.Contains(perr.Cause, "out of turn") {
		t.Fatalf("error %+v, want an internal error naming the answer out of turn", perr)
	}
}
