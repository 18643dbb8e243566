package worker

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
)

// pairTask is railTask with its reverse half, both signed with token.
func pairTask(a, b *Agent, rails int, token string) wire.Task {
	t := railTask(a, b, rails)
	t.SrcAPI = a.APIAddr()
	t.Reverse = &wire.ReverseTask{Deadline: t.Deadline.Add(time.Minute)}
	for _, rp := range t.Rails {
		rp.Src, rp.Dst = rp.Dst, rp.Src
		t.Reverse.Rails = append(t.Reverse.Rails, rp)
	}
	t.Ticket = probe.SignTicket([]byte(token), t.SweepID, t.Src, t.Dst, t.Deadline)
	t.Reverse.Ticket = probe.SignTicket([]byte(token), t.SweepID, t.Dst, t.Src, t.Reverse.Deadline)
	return t
}

// postTask sends t to a's API as the coordinator does and decodes the answer.
func postTask(t *testing.T, a *Agent, token string, task wire.Task) wire.TaskResult {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v1/tasks", bytes.NewReader(wire.TaskMsg.Append(nil, &task)))
	req.Header.Set("Content-Type", wire.ContentType)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("task answered %d: %s", rec.Code, rec.Body)
	}
	res, err := wire.TaskResultMsg.Decode(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A pair task: a measures a → b, then hands b → a to b with the
// coordinator's ticket for that direction; one answer carries both, and
// each worker reports its own direction.
func TestPairTaskHandsReverseToPeer(t *testing.T) {
	const token = "s3cret"
	var mu sync.Mutex
	seen := map[string]int{}
	a, b, rt := agentPair(t, Options{Token: token, OnTask: func(r wire.TaskResult) {
		mu.Lock()
		defer mu.Unlock()
		seen[r.Src+">"+r.Dst] += len(r.Rails)
	}}, "b/mlx5_2:down")
	res := postTask(t, a, token, pairTask(a, b, 4, token))
	if res.Reverse == nil || len(res.Rails) != 4 || len(res.Reverse.Rails) != 4 {
		t.Fatalf("answer %+v; want 4 rails each way", res)
	}
	for dir, rails := range map[string][]wire.RailResult{"a>b": res.Rails, "b>a": res.Reverse.Rails} {
		for _, rr := range rails {
			want := probe.ClassOK
			if rr.Rail == 2 {
				want = probe.ClassPortDown // b's port, at either end
			}
			if rr.Class != want {
				t.Errorf("%s rail %d: %s (%v), want %s", dir, rr.Rail, rr.Class, rr.Error, want)
			}
		}
	}
	if n := rt.count("POST /v1/tasks"); n != 1 {
		t.Errorf("%d tasks handed to the peer, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["a>b"] != 4 || seen["b>a"] != 4 {
		t.Errorf("task reports %v; want each worker to report its own direction", seen)
	}
}

// The reverse half is authorised by its own ticket: one signed for the
// other direction gets b's refusal in every reverse rail, and the forward
// figures stay.
func TestPairTaskReverseNeedsItsTicket(t *testing.T) {
	const token = "s3cret"
	a, b, _ := agentPair(t, Options{Token: token})
	task := pairTask(a, b, 2, token)
	task.Reverse.Ticket = task.Ticket
	res := postTask(t, a, token, task)
	for _, rr := range res.Rails {
		if rr.Class != probe.ClassOK {
			t.Errorf("forward rail %d: %s (%v)", rr.Rail, rr.Class, rr.Error)
		}
	}
	if res.Reverse == nil || len(res.Reverse.Rails) != 2 {
		t.Fatalf("reverse %+v; want 2 rails", res.Reverse)
	}
	for _, rr := range res.Reverse.Rails {
		if rr.Class == probe.ClassOK || rr.Error == nil {
			t.Errorf("reverse rail %d measured with a ticket for the other direction", rr.Rail)
		}
	}
}

// A peer that refuses the reverse task: every reverse rail says why.
func TestPairTaskPeerRefusesReverse(t *testing.T) {
	a, b, rt := twoAgents(t)
	real := b.Handler()
	rt.mu.Lock()
	rt.h[b.APIAddr()] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/tasks" {
			wire.Refuse(w, r, http.StatusServiceUnavailable, &probe.Error{Class: probe.ClassInternal, Cause: "busy"})
			return
		}
		real.ServeHTTP(w, r)
	})
	rt.mu.Unlock()
	res := postTask(t, a, "", pairTask(a, b, 2, ""))
	if res.Reverse == nil || len(res.Reverse.Rails) != 2 {
		t.Fatalf("reverse %+v; want 2 rails", res.Reverse)
	}
	for _, rr := range res.Reverse.Rails {
		if rr.Class != probe.ClassInternal || rr.Error == nil || rr.Error.Cause != "busy" {
			t.Errorf("reverse rail %d: %s %v; want the peer's refusal", rr.Rail, rr.Class, rr.Error)
		}
	}
}

// A pair task without deadlines (a caller that sets none) still runs its
// reverse half rather than timing it out at once.
func TestPairTaskWithoutDeadlines(t *testing.T) {
	a, b, _ := twoAgents(t)
	task := pairTask(a, b, 2, "")
	task.Deadline, task.Reverse.Deadline = time.Time{}, time.Time{}
	res := postTask(t, a, "", task)
	if res.Reverse == nil || len(res.Reverse.Rails) != 2 {
		t.Fatalf("reverse %+v; want 2 rails", res.Reverse)
	}
	for _, rr := range res.Reverse.Rails {
		if rr.Class != probe.ClassOK {
			t.Errorf("reverse rail %d: %s (%v)", rr.Rail, rr.Class, rr.Error)
		}
	}
}
