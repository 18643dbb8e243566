package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/internal/testkit/wait"
)

type sseEvent struct {
	name string
	data progressEvent
	raw  string // the data line, for streams of other events
}

// stream opens an event stream and delivers its events on a channel that
// closes when the stream ends. The request ends with the test.
func stream(t *testing.T, url string, hdr ...string) (<-chan sseEvent, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	out := make(chan sseEvent, 64)
	if res.StatusCode != 200 {
		close(out)
		return out, res
	}
	go func() {
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.raw = strings.TrimPrefix(line, "data: ")
				_ = json.Unmarshal([]byte(ev.raw), &ev.data)
			case line == "" && ev.name != "":
				out <- ev
				ev = sseEvent{}
			}
		}
	}()
	return out, res
}

func next(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("stream ended early")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return sseEvent{}
}

func eventServer(t *testing.T, b Backend, opts Options) *httptest.Server {
	t.Helper()
	s := New(b, opts)
	s.eventPoll = 2 * time.Millisecond
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func TestEventsFollowProgressToEnd(t *testing.T) {
	f := newFake()
	ts := eventServer(t, f, Options{})
	ch, res := stream(t, ts.URL+"/api/v1/sweeps/s2/events")
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	ev := next(t, ch)
	if ev.name != "progress" || ev.data.ID != "s2" || ev.data.RoundsDone != 1 || ev.data.Rounds != 3 {
		t.Fatalf("first event %+v", ev)
	}

	// No change, no event: let the handler poll a few more times.
	polled := f.polls()
	wait.For(t, "three more polls", func() bool { return f.polls() >= polled+3 })
	select {
	case ev := <-ch:
		t.Fatalf("event without a change: %+v", ev)
	default:
	}

	f.update("s2", func(s *api.SweepInfo) { s.RoundsDone, s.CellsDone = 2, 8 })
	if ev := next(t, ch); ev.name != "progress" || ev.data.RoundsDone != 2 || ev.data.CellsDone != 8 {
		t.Fatalf("after round 2: %+v", ev)
	}
	healthy := true
	f.update("s2", func(s *api.SweepInfo) { s.RoundsDone, s.CellsDone, s.State, s.Healthy = 3, 12, api.SweepDone, &healthy })
	ev = next(t, ch)
	if ev.name != "end" || ev.data.State != api.SweepDone || ev.data.Healthy == nil || !*ev.data.Healthy {
		t.Fatalf("end event %+v", ev)
	}
	if _, open := <-ch; open {
		t.Fatal("stream still open after end")
	}
}

func TestEventsFinishedSweepEndsAtOnce(t *testing.T) {
	ts := eventServer(t, newFake(), Options{})
	ch, _ := stream(t, ts.URL+"/api/v1/sweeps/s1/events")
	if ev := next(t, ch); ev.name != "end" || ev.data.RoundsDone != 3 {
		t.Fatalf("event %+v", ev)
	}
}

func TestEventsLatestAndGone(t *testing.T) {
	f := newFake()
	ts := eventServer(t, f, Options{})
	ch, _ := stream(t, ts.URL+"/api/v1/sweeps/latest/events")
	if ev := next(t, ch); ev.data.ID != "s2" {
		t.Fatalf("latest resolved to %+v", ev)
	}
	f.update("s2", nil)
	if ev := next(t, ch); ev.name != "gone" {
		t.Fatalf("event %+v, want gone", ev)
	}
}

func TestEventsBadRequests(t *testing.T) {
	ts := eventServer(t, newFake(), Options{Token: "sekrit"})
	_, res := stream(t, ts.URL+"/api/v1/sweeps/s2/events")
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: status %d", res.StatusCode)
	}
	_, res = stream(t, ts.URL+"/api/v1/sweeps/nope/events", "Authorization", "Bearer sekrit")
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown sweep: status %d", res.StatusCode)
	}
	ch, res := stream(t, ts.URL+"/api/v1/sweeps/s2/events", "Authorization", "Bearer sekrit")
	if res.StatusCode != 200 || next(t, ch).name != "progress" {
		t.Fatalf("with token: status %d", res.StatusCode)
	}
}

// A client that goes away must end its stream's loop: the handler stops
// polling the backend.
func TestEventsStopWhenClientLeaves(t *testing.T) {
	f := newFake()
	ts := eventServer(t, f, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/v1/sweeps/s2/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, "the stream to poll", func() bool { return f.polls() > 2 })
	cancel()
	res.Body.Close()
	waitStopped(t, f.polls)
}

// waitStopped waits until a stream's backend poll count stays put across
// many poll intervals: its handler has stopped.
func waitStopped(t *testing.T, polls func() int) {
	t.Helper()
	var last, stable int
	wait.For(t, "polling to stop", func() bool {
		p := polls()
		if p == last {
			stable++
		} else {
			last, stable = p, 0
		}
		time.Sleep(5 * time.Millisecond)
		return stable >= 10
	})
}

// Graceful shutdown must not wait for open streams to time out.
func TestEventsEndOnServerShutdown(t *testing.T) {
	s := New(newFake(), Options{})
	s.eventPoll = 2 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.Handler()}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	ch, _ := stream(t, "http://"+ln.Addr().String()+"/api/v1/sweeps/s2/events")
	next(t, ch)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v after %s", err, time.Since(start))
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("serve: %v", err)
	}
	for range ch { // the stream closes
	}
}
