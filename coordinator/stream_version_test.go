package coordinator

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// A worker of the previous version knows only rdmamesh-tasks/1 and
// refuses any other upgrade as a bad request, as its stream server did.
// The leader asks it for /1 at once, gets its tasks answered in floats on
// a stream, posts none, and asks for /2 again after streamRetry.
func TestStreamToAWorkerOfThePreviousVersion(t *testing.T) {
	var codes, floats atomic.Int64
	w := newStreamWorker(t, &streamWorker{wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == wire.StreamPath && r.Header.Get("Upgrade") != wire.StreamProtoFloats {
				codes.Add(1)
				http.Error(rw, "a task stream opens with Upgrade: "+wire.StreamProtoFloats, http.StatusBadRequest)
				return
			}
			if r.URL.Path == wire.StreamPath {
				floats.Add(1)
			}
			h.ServeHTTP(rw, r)
		})
	}})
	c := streamCoordinator(t, "")
	for range 3 {
		res, perr := c.postTask(context.Background(), w.addr(), time.Minute, streamTaskOf("a"))
		checkAnswer(t, res, perr)
		if res.Rails[1].LatencyQ != nil {
			t.Fatal("an answer on a /1 stream came in codes")
		}
	}
	tt, _ := c.taskTarget(w.addr())
	if codes.Load() != 1 || floats.Load() != 1 || w.posts.Load() != 0 || !tt.streams.floats(time.Now()) || tt.streams.floats(time.Now().Add(streamRetry)) {
		t.Fatalf("/2 asked %d times, /1 %d, %d posted; floats now %v, after %s %v", codes.Load(), floats.Load(), w.posts.Load(),
			tt.streams.floats(time.Now()), streamRetry, tt.streams.floats(time.Now().Add(streamRetry)))
	}
}

// A worker that switches to another protocol than the one asked for (here
// the previous version's, to a request for the current one) gets no
// stream, and its task is posted at once: the leader does not wait on the
// switched connection, which the worker keeps open.
func TestStreamSwitchedToAnotherProtocol(t *testing.T) {
	held := make(chan struct{})
	w := newStreamWorker(t, &streamWorker{wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path != wire.StreamPath {
				h.ServeHTTP(rw, r)
				return
			}
			conn, _, ok := switchTo(rw, wire.StreamProtoFloats)
			if !ok {
				return
			}
			defer conn.Close()
			<-held // held open, as a stream would be
		})
	}})
	t.Cleanup(func() { close(held) })
	c := streamCoordinator(t, "")
	type answer struct {
		res  wire.TaskResult
		perr *probe.Error
	}
	done := make(chan answer, 1)
	go func() {
		res, perr := c.postTask(context.Background(), w.addr(), time.Minute, streamTaskOf("a"))
		done <- answer{res, perr}
	}()
	select {
	case a := <-done:
		checkAnswer(t, a.res, a.perr)
	case <-time.After(20 * time.Second):
		t.Fatal("the task waited on the switched connection")
	}
	tt, _ := c.taskTarget(w.addr())
	if _, refused := tt.streams.take(time.Now()); w.posts.Load() != 1 || !refused {
		t.Fatalf("%d tasks posted, streams refused %v", w.posts.Load(), refused)
	}
}
