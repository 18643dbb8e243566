package scale

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// nullTask's answers, whose rails come from its memo of encoded answers,
// are the bytes NullResult's would encode to, across changing rails,
// iteration counts, halves and spreads, with one scratch throughout; so
// are NullAppend's in codes, asked for between them (the memo keeps both
// versions apart). Four
// pairs, so that most answers are taken from the memo; each thing the
// memo depends on changes alone somewhere in the run (the forward rails
// at task 87, the reverse ones at 45).
func TestNullTaskAnswersAsNullResult(t *testing.T) {
	plan := func(n, gid int) []probe.RailPair {
		var out []probe.RailPair
		for r := range n {
			ep := probe.Endpoint{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, GIDIndex: gid, Rail: r}
			far := ep
			far.GIDIndex += 10 // the halves differ
			out = append(out, probe.RailPair{Rail: r, Src: ep, Dst: far})
		}
		return out
	}
	hdr := http.Header{"Content-Type": {wire.ContentType}}
	taskURL := &url.URL{Scheme: "http", Host: "node:7471", Path: "/v1/tasks"}
	// Each pair also runs the other way: a forward half's spread is then
	// another task's reverse half's.
	pairs := [][2]string{{"n0", "n1"}, {"n1", "n0"}, {"n2", "n3"}, {"n3", "n2"}}
	for i := range 400 {
		task := wire.Task{SweepID: "s", Round: i, Src: pairs[i%4][0], Dst: pairs[i%4][1],
			Rails: plan(1+(i/20)%3, 3+(i+13)/100), Params: probe.TestParams{LatencyIters: 1000 + (i/7)%3}}
		if (i/30)%4 != 0 {
			task.Reverse = &wire.ReverseTask{Rails: plan(1+(i/20)%3, 3+(i/45)%2)}
		}
		buf := wire.GetBuf()
		buf.B = wire.TaskMsg.Append(buf.B, &task)
		req := &http.Request{Method: http.MethodPost, URL: taskURL, Header: hdr, Body: wire.NewBody(buf), ContentLength: int64(len(buf.B))}
		resp, ok := nullTask(req)
		req.Body.Close()
		if !ok {
			t.Fatalf("task %d not answered", i)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := NullResult(task)
		if w := wire.TaskResultMsg.Append(nil, &want); string(got) != string(w) {
			t.Fatalf("task %d: answered %x, NullResult encodes to %x", i, got, w)
		}
		if i%3 == 0 {
			got, ok := NullAppend(wire.TaskMsg.Append(nil, &task), nil, true)
			if w := wire.TaskResultQ.Append(nil, &want); !ok || string(got) != string(w) {
				t.Fatalf("task %d: answered %x in codes, NullResult encodes to %x", i, got, w)
			}
		}
	}
}

// BenchmarkNullTask is a stand-in host's cost per 8-rail pair task, the
// harness's share of a control-mode sweep (it is not the coordinator's).
func BenchmarkNullTask(b *testing.B) {
	var fwd, back []probe.RailPair
	for r := range 8 {
		ep := probe.Endpoint{Device: fmt.Sprintf("mlx5_%d", r), Port: 1, GIDIndex: 3, Rail: r}
		fwd = append(fwd, probe.RailPair{Rail: r, Src: ep, Dst: ep})
		back = append(back, probe.RailPair{Rail: r, Src: ep, Dst: ep})
	}
	now := time.Now()
	tasks := make([][]byte, 64)
	for i := range tasks {
		t := wire.Task{SweepID: "sweep-1", Round: i, Src: fmt.Sprintf("node-%04d", i), Dst: fmt.Sprintf("node-%04d", 1000-i),
			DstAPI: "10.0.0.2:7471", SrcAPI: "10.0.0.1:7471", Rails: fwd, Params: probe.TestParams{LatencyIters: 1000},
			Deadline: now, Reverse: &wire.ReverseTask{Rails: back, Deadline: now}}
		tasks[i] = wire.TaskMsg.Append(nil, &t)
	}
	hdr := http.Header{"Content-Type": {wire.ContentType}}
	taskURL := &url.URL{Scheme: "http", Host: "node:7471", Path: "/v1/tasks"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf := wire.GetBuf()
		buf.B = append(buf.B, tasks[i%len(tasks)]...)
		req := &http.Request{Method: http.MethodPost, URL: taskURL, Header: hdr, Body: wire.NewBody(buf), ContentLength: int64(len(buf.B))}
		resp, ok := nullTask(req)
		req.Body.Close()
		if !ok {
			b.Fatal("not answered")
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

// The stand-ins take only what carries the workers' token, as a worker
// does: a task or stream opening without it is left to the worker's own
// handler, which refuses it.
func TestStandInsTakeOnlyTheToken(t *testing.T) {
	p := newInproc()
	p.null, p.bearer = true, "Bearer s3cret"
	for _, c := range []struct {
		auth string
		want bool
	}{{"Bearer s3cret", true}, {"", false}, {"Bearer other", false}, {"Bearer s3cret ", false}} {
		req := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: wire.StreamPath}, Header: http.Header{"Upgrade": {wire.StreamProto}}}
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		if got := p.openStream(req, func() func() { return func() {} }) != nil; got != c.want {
			t.Errorf("a stream opened with %q: taken %v, want %v", c.auth, got, c.want)
		}
		// A posted task: the stand-in answers it, or the worker's handler
		// (here one that refuses everything) does.
		p.add("w1:7100", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) }))
		task := wire.TaskMsg.Append(nil, &wire.Task{SweepID: "s", Src: "a", Dst: "b",
			Rails: []probe.RailPair{{Rail: 0, Src: probe.Endpoint{Device: "mlx5_0"}, Dst: probe.Endpoint{Device: "mlx5_0"}}}})
		post, err := http.NewRequest(http.MethodPost, "http://w1:7100/v1/tasks", bytes.NewReader(task))
		if err != nil {
			t.Fatal(err)
		}
		post.Header.Set("Content-Type", wire.ContentType)
		if c.auth != "" {
			post.Header.Set("Authorization", c.auth)
		}
		resp, err := p.RoundTrip(post)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.StatusCode == http.StatusOK; got != c.want {
			t.Errorf("a task posted with %q: %s, taken by the stand-in %v, want %v", c.auth, resp.Status, got, c.want)
		}
	}
}
