package worker

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// openStream opens a task stream on a's API as the coordinator does.
func openStream(t *testing.T, a *Agent, token string) (io.ReadWriteCloser, *http.Response) {
	t.Helper()
	return openStreamAs(t, a, token, wire.StreamProto)
}

// openStreamAs opens a task stream of version proto.
func openStreamAs(t *testing.T, a *Agent, token, proto string) (io.ReadWriteCloser, *http.Response) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, (&url.URL{Scheme: "http", Host: a.APIAddr(), Path: wire.StreamPath}).String(), http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	wire.UpgradeHeader(req.Header)
	req.Header.Set("Upgrade", proto)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	rwc, ok := wire.StreamOf(resp)
	if !ok {
		resp.Body.Close()
		return nil, resp
	}
	t.Cleanup(func() { rwc.Close() })
	return rwc, resp
}

// exchange sends task bytes as frame seq and reads the answer.
func exchange(t *testing.T, rwc io.ReadWriteCloser, seq uint64, task []byte) (byte, []byte) {
	t.Helper()
	b := append(wire.BeginFrame(nil), task...)
	wire.EndFrame(b, wire.FrameTask, seq)
	if _, err := rwc.Write(b); err != nil {
		t.Fatal(err)
	}
	in := &wire.Buf{}
	kind, got, err := wire.ReadFrame(rwc, in, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got != seq {
		t.Fatalf("answer to frame %d came as %d", seq, got)
	}
	return kind, in.B
}

// The task stream runs the tasks POST /v1/tasks runs, behind the same
// token, refuses a bad task with the same error, and ends with the worker.
// Its answers carry the figures as codes; a stream of the earlier version
// (a coordinator of that version) gets them in floats.
func TestTaskStream(t *testing.T) {
	const token = "s3cret"
	a, b, _ := agentPair(t, Options{Token: token})
	if rwc, resp := openStream(t, a, "wrong"); rwc != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a stream with the wrong token: %v %d, want 401", rwc != nil, resp.StatusCode)
	}
	rwc, resp := openStream(t, a, token)
	if rwc == nil {
		t.Fatalf("stream refused: %s", resp.Status)
	}
	for seq := uint64(1); seq <= 2; seq++ {
		task := pairTask(a, b, 2, token)
		kind, raw := exchange(t, rwc, seq, wire.TaskMsg.Append(nil, &task))
		res, err := wire.TaskResultQ.Decode(raw)
		if kind != wire.FrameResult || err != nil || len(res.Rails) != 2 || res.Reverse == nil || len(res.Reverse.Rails) != 2 ||
			res.Rails[0].LatencyQ == nil || res.Reverse.Rails[1].LatencyQ == nil {
			t.Fatalf("frame %d: kind %d, %+v (%v)", seq, kind, res, err)
		}
	}
	old, resp := openStreamAs(t, a, token, wire.StreamProtoFloats)
	if old == nil {
		t.Fatalf("a stream of the earlier version refused: %s", resp.Status)
	}
	task := pairTask(a, b, 2, token)
	kind, raw := exchange(t, old, 1, wire.TaskMsg.Append(nil, &task))
	if res, err := wire.TaskResultMsg.Decode(raw); kind != wire.FrameResult || err != nil || len(res.Rails) != 2 || res.Rails[0].Latency == nil {
		t.Fatalf("the earlier version's stream: kind %d, %+v (%v)", kind, res, err)
	}
	bad := pairTask(a, b, 2, token)
	bad.Src = "b"
	kind, raw = exchange(t, rwc, 3, wire.TaskMsg.Append(nil, &bad))
	e, err := wire.ErrorMsg.Decode(raw)
	if kind != wire.FrameError || err != nil || !strings.Contains(e.Cause, `task src "b" sent to worker "a"`) {
		t.Fatalf("a task for another worker: kind %d, %+v (%v)", kind, e, err)
	}
	if kind, _ := exchange(t, rwc, 4, []byte("not a task")); kind != wire.FrameError {
		t.Fatalf("bytes that are not a task: kind %d, want an error frame", kind)
	}
	if n := a.TaskStreams(); n != 2 {
		t.Fatalf("%d streams open, want 2", n)
	}
	a.Kill()
	if n := a.TaskStreams(); n != 0 {
		t.Fatalf("%d streams open after the worker stopped", n)
	}
	if _, _, err := wire.ReadFrame(rwc, &wire.Buf{}, 1<<20); err == nil {
		t.Fatal("the stream still reads after the worker stopped")
	}
}

// A stand-in's answer hook answers streamed tasks too.
func TestTaskStreamAnswerHook(t *testing.T) {
	a, b, _ := agentPair(t, Options{})
	a.opts.AnswerTask = func(task, out []byte, codes bool) ([]byte, bool) {
		tk, err := wire.TaskMsg.Decode(task)
		if err != nil || !codes {
			return out, false
		}
		return wire.TaskResultQ.Append(out, &wire.TaskResult{SweepID: tk.SweepID, Src: tk.Src, Dst: "hooked"}), true
	}
	rwc, resp := openStream(t, a, "")
	if rwc == nil {
		t.Fatalf("stream refused: %s", resp.Status)
	}
	task := railTask(a, b, 1)
	kind, raw := exchange(t, rwc, 9, wire.TaskMsg.Append(nil, &task))
	if res, err := wire.TaskResultQ.Decode(raw); kind != wire.FrameResult || err != nil || res.Dst != "hooked" {
		t.Fatalf("kind %d, %+v (%v)", kind, res, err)
	}
}
