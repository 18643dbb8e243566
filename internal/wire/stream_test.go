package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestFrames(t *testing.T) {
	b := append(BeginFrame([]byte(nil)), "payload"...)
	EndFrame(b, FrameResult, 1<<40+3)
	b = append(b, BeginFrame(nil)...) // an empty second frame
	EndFrame(b[len(b)-FrameHead:], FrameError, 2)
	r, buf := bytes.NewReader(b), &Buf{}
	if kind, seq, err := ReadFrame(r, buf, 64); err != nil || kind != FrameResult || seq != 1<<40+3 || string(buf.B) != "payload" {
		t.Fatalf("first frame: %d %d %q %v", kind, seq, buf.B, err)
	}
	if kind, seq, err := ReadFrame(r, buf, 64); err != nil || kind != FrameError || seq != 2 || len(buf.B) != 0 {
		t.Fatalf("second frame: %d %d %q %v", kind, seq, buf.B, err)
	}
	if _, _, err := ReadFrame(r, buf, 64); err != io.EOF {
		t.Fatalf("after the last frame: %v, want EOF", err)
	}
	if _, _, err := ReadFrame(bytes.NewReader(b), buf, 6); err == nil || !strings.Contains(err.Error(), "over the 6-byte bound") {
		t.Fatalf("a frame over the bound: %v", err)
	}
	if _, _, err := ReadFrame(bytes.NewReader(b[:FrameHead+3]), buf, 64); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a cut frame: %v, want an unexpected EOF", err)
	}
	first := b[:FrameHead+len("payload")]
	if kind, seq, p, ok := SplitFrame(first); !ok || kind != FrameResult || seq != 1<<40+3 || string(p) != "payload" {
		t.Fatalf("the first frame split: %d %d %q %v", kind, seq, p, ok)
	}
	for _, bad := range [][]byte{b, first[:FrameHead+3], first[:FrameHead-1]} {
		if _, _, _, ok := SplitFrame(bad); ok {
			t.Fatalf("%d bytes split as one whole frame", len(bad))
		}
	}
}

// A request on the stream path that asks for no upgrade is refused with a
// reason, not taken over.
func TestStreamServerWantsAnUpgrade(t *testing.T) {
	var s StreamServer
	defer s.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Serve(w, r, func(_ context.Context, task, out []byte, _ bool) ([]byte, byte) {
			return append(out, task...), FrameResult
		})
	}))
	defer srv.Close()
	resp, err := http.Post(srv.URL+StreamPath, ContentType, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if _, ok := StreamOf(resp); ok || resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Upgrade: "+StreamProto) {
		t.Fatalf("%s: %s", resp.Status, body)
	}
	if s.Open() != 0 {
		t.Fatal("a refused request counts as a stream")
	}
}

// Every task on a stream gets a live context: the wait for the end of the
// stream that ends after each answer (answerWatched) must not end the
// stream's own context with it.
func TestStreamServerTaskContexts(t *testing.T) {
	var s StreamServer
	defer s.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Serve(w, r, func(ctx context.Context, task, out []byte, _ bool) ([]byte, byte) {
			if ctx.Err() != nil {
				return append(out, "cancelled"...), FrameError
			}
			return append(out, task...), FrameResult
		})
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL+StreamPath, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	UpgradeHeader(req.Header)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	rwc, ok := StreamOf(resp)
	if !ok {
		t.Fatalf("no stream: %s", resp.Status)
	}
	defer rwc.Close()
	in := &Buf{}
	for seq := uint64(1); seq <= 3; seq++ {
		b := append(BeginFrame(nil), "task"...)
		EndFrame(b, FrameTask, seq)
		if _, err := rwc.Write(b); err != nil {
			t.Fatal(err)
		}
		kind, got, err := ReadFrame(rwc, in, 64)
		if err != nil || kind != FrameResult || got != seq || string(in.B) != "task" {
			t.Fatalf("task %d: kind %d, seq %d, %q, %v", seq, kind, got, in.B, err)
		}
	}
}
