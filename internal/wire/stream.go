package wire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
)

// The task stream: a worker API connection that carries the coordinator's
// tasks and the worker's answers as frames, one task at a time, instead of
// an HTTP request per task. Over a real network a request cost the leader
// about 60 µs a task beyond the syscalls (net/http's hand-offs between the
// caller and each connection's read and write goroutines, headers, request
// objects); a frame costs a write and a read.
//
// It is opened by an HTTP/1.1 upgrade on StreamPath, so the connection is
// dialled, TLS-wrapped and authorised (the bearer token, once) as any API
// call is; every task still carries its HMAC tickets.
const (
	StreamPath = "/v1/tasks/stream"
	// StreamProto is the Upgrade token; a version change gets a new one,
	// and a worker that does not know it refuses the upgrade (the
	// coordinator then posts its tasks). Version 2's answers are
	// TaskResultQ, with the figures as codes.
	StreamProto = "rdmamesh-tasks/2"
	// StreamProtoFloats is version 1, whose answers are TaskResultMsg: a
	// worker still serves it to coordinators of an earlier version.
	StreamProtoFloats = "rdmamesh-tasks/1"
)

// Frame kinds.
const (
	FrameTask   byte = 1 // a TaskMsg, coordinator → worker
	FrameResult byte = 2 // a TaskResultMsg, the answer
	FrameError  byte = 3 // an ErrorMsg: the task was refused, as a 400 would say
)

// FrameHead is a frame's header: the payload's length (4 bytes, big
// endian), its kind, and the sequence number the answer echoes (8 bytes),
// so a late answer can never be taken for the next task's.
const FrameHead = 4 + 1 + 8

// BeginFrame appends room for a frame header to b; the payload follows and
// EndFrame fills the header in, so a frame is written in one call.
func BeginFrame(b []byte) []byte { return append(b, make([]byte, FrameHead)...) }

// EndFrame fills in the header of the frame that starts at b[0].
func EndFrame(b []byte, kind byte, seq uint64) {
	binary.BigEndian.PutUint32(b, uint32(len(b)-FrameHead))
	b[4] = kind
	binary.BigEndian.PutUint64(b[5:], seq)
}

// frameHead reads a frame header: its payload's length, kind and sequence.
func frameHead(h []byte) (n uint32, kind byte, seq uint64) {
	return binary.BigEndian.Uint32(h), h[4], binary.BigEndian.Uint64(h[5:])
}

// SplitFrame reads the one whole frame that is b, for a stream's far end
// in memory (the scale harness); ok is false when b is not exactly one.
func SplitFrame(b []byte) (kind byte, seq uint64, payload []byte, ok bool) {
	if len(b) < FrameHead {
		return 0, 0, nil, false
	}
	n, kind, seq := frameHead(b)
	return kind, seq, b[FrameHead:], int(n) == len(b)-FrameHead
}

// ReadFrame reads one frame from r into buf (its payload is buf.B, valid
// until buf is reused), refusing payloads over max bytes.
func ReadFrame(r io.Reader, buf *Buf, max int) (kind byte, seq uint64, err error) {
	var head [FrameHead]byte
	if _, err = io.ReadFull(r, head[:]); err != nil {
		return 0, 0, err
	}
	n, kind, seq := frameHead(head[:])
	if int64(n) > int64(max) {
		return 0, 0, fmt.Errorf("a %d-byte frame, over the %d-byte bound", n, max)
	}
	buf.B = append(buf.B[:0], make([]byte, n)...)
	if _, err = io.ReadFull(r, buf.B); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, err
	}
	return kind, seq, nil
}

// UpgradeHeader marks a request on StreamPath as a stream's opening.
func UpgradeHeader(h http.Header) {
	h["Connection"] = []string{"Upgrade"}
	h["Upgrade"] = []string{StreamProto}
}

// StreamOf is the stream of an answer to an opening request: its body,
// when the worker switched to the protocol asked for (resp.Request's; with
// none, StreamProto). ok is false when the worker answered otherwise (a
// worker without streams says 404), and resp is then left for the caller
// to read.
func StreamOf(resp *http.Response) (io.ReadWriteCloser, bool) {
	asked := StreamProto
	if resp.Request != nil {
		asked = resp.Request.Header.Get("Upgrade")
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || asked == "" || !strings.EqualFold(resp.Header.Get("Upgrade"), asked) {
		return nil, false
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	return rwc, ok
}

// StreamAnswer answers one task frame's payload: it appends the answer's
// payload to out and returns the answer's kind (FrameResult or
// FrameError). A result is ResultCodec(codes)'s: the stream's version
// says which the coordinator reads. ctx ends when the stream's server
// closes. The payload is only valid during the call.
type StreamAnswer func(ctx context.Context, task, out []byte, codes bool) ([]byte, byte)

// StreamServer serves task streams and owns them: the connections an
// upgrade takes over are no longer the http.Server's, which neither
// closes nor waits for them, so Close does both.
type StreamServer struct {
	// Idle closes a stream no task came on for this long; 0: two minutes,
	// longer than the coordinator keeps an idle stream.
	Idle time.Duration

	mu     sync.Mutex
	conns  map[net.Conn]context.CancelFunc
	closed bool
	wg     sync.WaitGroup
}

// maxTask bounds a task frame, as the worker bounds a task's body.
const maxTask = 1 << 20

// Serve takes r's connection over as a stream and answers its tasks with
// answer until the coordinator closes it, it idles out or s is closed.
func (s *StreamServer) Serve(w http.ResponseWriter, r *http.Request, answer StreamAnswer) {
	codes, floats := false, false
	// A list of protocols (RFC 9110, 7.8), in any order: the newest wins.
	for _, v := range r.Header.Values("Upgrade") {
		for p := range strings.SplitSeq(v, ",") {
			p = strings.TrimSpace(p)
			codes = codes || strings.EqualFold(p, StreamProto)
			floats = floats || strings.EqualFold(p, StreamProtoFloats)
		}
	}
	if !codes && !floats {
		Refuse(w, r, http.StatusBadRequest, &probe.Error{Class: probe.ClassInternal,
			Cause: fmt.Sprintf("a task stream opens with Upgrade: %s or %s", StreamProto, StreamProtoFloats),
			Fix:   "coordinator and workers must run the same rdmamesh version"})
		return
	}
	proto := StreamProto
	if !codes {
		proto = StreamProtoFloats
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		// HTTP/2 has no upgrade: the coordinator then posts its tasks.
		Refuse(w, r, http.StatusHTTPVersionNotSupported, &probe.Error{Class: probe.ClassInternal,
			Cause: "task streams need HTTP/1.1", Fix: "the coordinator falls back to a request per task"})
		return
	}
	// Not the request's context: the hijacked reader still goes through the
	// server's, which cancels that context on any read error, the
	// deadline that ends answerWatched's wait included.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	conn, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	if !s.add(conn, cancel) {
		conn.Close()
		return
	}
	defer s.drop(conn)
	if _, err := brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + proto + "\r\n\r\n"); err != nil || brw.Flush() != nil {
		return
	}
	s.serve(ctx, conn, brw.Reader, func(ctx context.Context, task, out []byte) ([]byte, byte) {
		return answer(ctx, task, out, codes)
	})
}

// streamAnswer is a StreamAnswer for one stream's version.
type streamAnswer func(ctx context.Context, task, out []byte) ([]byte, byte)

func (s *StreamServer) serve(ctx context.Context, conn net.Conn, br *bufio.Reader, answer streamAnswer) {
	idle := s.Idle
	if idle <= 0 {
		idle = 2 * time.Minute
	}
	in, out := GetBuf(), GetBuf()
	defer in.Put()
	defer func() { out.Put() }()
	for {
		_ = conn.SetReadDeadline(time.Now().Add(idle))
		kind, seq, err := ReadFrame(br, in, maxTask)
		if err != nil || kind != FrameTask {
			return
		}
		b, k := s.answerWatched(ctx, conn, br, answer, in.B, BeginFrame(out.B[:0]))
		out.B = b
		EndFrame(b, k, seq)
		// A coordinator that stops reading holds this goroutine no longer
		// than an idle stream would.
		_ = conn.SetWriteDeadline(time.Now().Add(idle))
		if _, err := conn.Write(b); err != nil {
			return
		}
		if cap(out.B) > 64<<10 {
			out.B = nil // one huge answer is not held for the stream's life
		}
	}
}

// answerWatched runs answer with a context that also ends when the
// coordinator closes the stream: it gave up on the task (its timeout, or
// a peer declared dead), and a worker must not hold its HCAs and its
// paused probing until the task's own deadline. net/http does the same
// for a request's context by reading in the background; after a takeover
// it is ours to do.
func (s *StreamServer) answerWatched(ctx context.Context, conn net.Conn, br *bufio.Reader, answer streamAnswer, task, out []byte) ([]byte, byte) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		// One task at a time: nothing comes before the answer but the
		// end of the stream. The read deadline below ends the wait.
		if _, err := br.Peek(1); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			cancel()
		}
	}()
	b, k := answer(tctx, task, out)
	_ = conn.SetReadDeadline(time.Unix(1, 0))
	<-watched
	return b, k
}

func (s *StreamServer) add(c net.Conn, cancel context.CancelFunc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.conns == nil {
		s.conns = map[net.Conn]context.CancelFunc{}
	}
	s.conns[c] = cancel
	s.wg.Add(1)
	return true
}

func (s *StreamServer) drop(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
	s.wg.Done()
}

// Close ends every stream (their tasks' contexts, then their
// connections), waits for their goroutines, and refuses new ones.
func (s *StreamServer) Close() {
	s.mu.Lock()
	s.closed = true
	for c, cancel := range s.conns {
		cancel()
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Open is how many streams s is serving.
func (s *StreamServer) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
