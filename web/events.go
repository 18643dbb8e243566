package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// Live progress is served as Server-Sent Events by watching the backend:
// each stream polls Backend.Sweep on its own ticker, which costs a map
// lookup in the coordinator, and writes an event only when the progress
// changed. The coordinator needs no notification hooks, and the stream's
// lifetime is the request's.
const (
	defaultEventPoll = 250 * time.Millisecond
	// A comment line this often keeps proxies and browsers from timing out
	// an idle stream while a long round runs.
	eventHeartbeat = 15 * time.Second
)

// progressEvent is the data of an SSE "progress" or "end" event: the
// sweep's counters without its node list, which at 1,024 nodes would be
// most of every event.
type progressEvent struct {
	ID         string `json:"id"`
	State      string `json:"state"`
	Rounds     int    `json:"rounds"`
	RoundsDone int    `json:"rounds_done"`
	Cells      int    `json:"cells"`
	CellsDone  int    `json:"cells_done"`
	RetestPass int    `json:"retest_pass,omitempty"`
	Retested   int    `json:"retested,omitempty"`
	Error      string `json:"error,omitempty"`
	Healthy    *bool  `json:"healthy,omitempty"`
}

func progressOf(i api.SweepInfo) progressEvent {
	return progressEvent{ID: i.ID, State: i.State, Rounds: i.Rounds, RoundsDone: i.RoundsDone, Cells: i.Cells,
		CellsDone: i.CellsDone, RetestPass: i.RetestPass, Retested: i.Retested, Error: i.Error, Healthy: i.Healthy}
}

// sweepEvents serves GET /api/v1/sweeps/{id}/events:
//
//	event: progress   data: progressEvent   (at once, then on every change)
//	event: end        data: progressEvent   (the sweep is no longer running; the stream closes)
//	event: gone       data: {"id": ...}     (the backend forgot the sweep; the stream closes)
//
// The UI reads it with fetch rather than EventSource, because EventSource
// cannot send the bearer token.
func (s *Server) sweepEvents(c *gin.Context) {
	info, ok := s.resolveSweep(c)
	if !ok {
		return
	}
	id := info.ID
	sse := s.openSSE(c)
	defer sse.close()
	var last []byte
	for {
		info, ok := s.b.Sweep(id)
		if !ok {
			data, _ := json.Marshal(map[string]string{"id": id})
			sse.send("gone", data)
			return
		}
		data, err := json.Marshal(progressOf(info))
		if err != nil {
			return
		}
		switch {
		case info.State != api.SweepRunning:
			sse.send("end", data)
			return
		case !bytes.Equal(data, last):
			if !sse.send("progress", data) {
				return
			}
			last = data
		case !sse.heartbeat():
			return
		}
		if !sse.wait() {
			return
		}
	}
}

// sseStream is one open Server-Sent Events answer: the sweep and live
// streams share its framing, heartbeat and ending.
type sseStream struct {
	c         *gin.Context
	stop      <-chan struct{}
	tick      *time.Ticker
	lastWrite time.Time
}

// openSSE writes the stream's headers; the caller must close it.
func (s *Server) openSSE(c *gin.Context) *sseStream {
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx buffers responses unless told not to
	c.Status(http.StatusOK)
	return &sseStream{c: c, stop: s.shutdownSignal(c.Request), tick: time.NewTicker(s.eventPoll), lastWrite: time.Now()}
}

func (e *sseStream) close() { e.tick.Stop() }

// send writes one event and reports whether the client still listens.
func (e *sseStream) send(event string, data []byte) bool {
	_, err := fmt.Fprintf(e.c.Writer, "event: %s\ndata: %s\n\n", event, data)
	e.c.Writer.Flush()
	e.lastWrite = time.Now()
	return err == nil
}

// heartbeat writes a comment line when the stream has been quiet for
// eventHeartbeat; false means the client is gone.
func (e *sseStream) heartbeat() bool {
	if time.Since(e.lastWrite) < eventHeartbeat {
		return true
	}
	if _, err := e.c.Writer.WriteString(": ping\n\n"); err != nil {
		return false
	}
	e.c.Writer.Flush()
	e.lastWrite = time.Now()
	return true
}

// wait sleeps until the next poll; false when the client went away or the
// server shuts down.
func (e *sseStream) wait() bool {
	select {
	case <-e.c.Request.Context().Done():
		return false
	case <-e.stop:
		return false
	case <-e.tick.C:
		return true
	}
}

// shutdownSignal returns a channel closed when the http.Server serving r
// begins a graceful Shutdown. Shutdown waits for active requests, and an
// event stream would otherwise hold it until its timeout. One hook is
// registered per server, not per stream.
func (s *Server) shutdownSignal(r *http.Request) <-chan struct{} {
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	if srv == nil {
		return nil // a nil channel never fires: the request context still ends the stream
	}
	s.shutMu.Lock()
	defer s.shutMu.Unlock()
	if ch, ok := s.shutdown[srv]; ok {
		return ch
	}
	ch := make(chan struct{})
	s.shutdown[srv] = ch
	srv.RegisterOnShutdown(func() {
		s.shutMu.Lock()
		delete(s.shutdown, srv)
		s.shutMu.Unlock()
		close(ch)
	})
	return ch
}
