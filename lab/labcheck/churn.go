package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/internal/wire"
	"github.com/rdmamesh/rdmamesh/worker"
)

// churnKind is one way a test session can go. All but bad-gid build verbs
// objects on at least one side before they end, so each exercises a
// teardown path: after success, after the peer refused, after the peer
// vanished, and after a deadline cut a connected test short.
type churnKind struct {
	name  string
	every int         // one task in every N is of this kind (first match wins)
	want  probe.Class // the class it must end with
	task  func(t *wire.Task, api, dead string)
}

var churnKinds = []churnKind{
	// The initiator has its QP when the responder's API turns the request
	// down (no such HCA there) ...
	{"responder-rejects", 50, probe.ClassInternal, func(t *wire.Task, api, dead string) {
		t.Rails[0].Dst.Device = "nosuch0"
	}},
	// ... or when the responder's engine cannot open its half (no GID at
	// that index).
	{"responder-open-fails", 43, probe.ClassInvalidGID, func(t *wire.Task, api, dead string) {
		t.Rails[0].Dst.GIDIndex = 9
	}},
	// The initiator has its QP when the responder's worker cannot be
	// reached. The responder named is vm1 itself, alive to the worker's
	// gossip: a dial that fails then is the control network's fault
	// (probe.Unreachable), not a lost peer.
	{"peer-unreachable", 53, probe.ClassUnreachable, func(t *wire.Task, api, dead string) { t.DstAPI = dead }},
	// Both QPs connected, the ping-pong cut off by its deadline mid-way.
	{"deadline-mid-test", 47, probe.ClassTimeout, func(t *wire.Task, api, dead string) {
		t.Params.LatencyIters, t.Params.Timeout = 100000, 30*time.Millisecond
	}},
	// No GID at that index: refused before any object is made.
	{"bad-gid", 61, probe.ClassInvalidGID, func(t *wire.Task, api, dead string) { t.Rails[0].Src.GIDIndex = 9 }},
	{"ok-rdmacm", 5, probe.ClassOK, func(t *wire.Task, api, dead string) { t.Params.Connect = probe.ConnectRDMACM }},
	{"ok-exchange", 1, probe.ClassOK, func(t *wire.Task, api, dead string) {}},
}

type churnReport struct {
	Tasks     int                  `json:"tasks"`
	Kinds     map[string]int       `json:"kinds"`
	Wrong     map[string]int       `json:"wrong"` // kind -> tasks that ended with another class
	Examples  map[string]string    `json:"examples,omitempty"`
	Elapsed   string               `json:"elapsed"`
	PerTask   string               `json:"per_task"`
	Before    worker.ProcessStats  `json:"before"`
	After     worker.ProcessStats  `json:"after"`
	Devices   []probe.DeviceHealth `json:"devices"`
	Served    map[string]int64     `json:"served"`
	ByClass   map[probe.Class]int  `json:"by_class"`
	Threshold map[string]int64     `json:"threshold"`
	Problems  []string             `json:"problems,omitempty"`
}

// churn drives n tasks through one worker's own API, each a test from the
// worker to itself (initiator and responder in the same process, RDMA over
// rxe loopback), in the mix of churnKinds, conc at a time. Before (after a
// warm-up, so caches and pools have their steady size) and after (once no
// session is left) it reads the worker's goroutines, open files and RSS,
// and fails on growth. The QP/CQ/MR counts are compared by the lab script
// with `rdma resource show` around this run.
func churn(api, node string, n, conc int, out string) error {
	base := "http://" + api
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	dead := ln.Addr().String() // closed below: a port nobody listens on
	ln.Close()

	run := func(count int, rep *churnReport) {
		var mu sync.Mutex
		jobs := make(chan int)
		var wg sync.WaitGroup
		for w := 0; w < conc; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range jobs {
					kind, class, e := churnOne(base, api, dead, node, i)
					mu.Lock()
					rep.Kinds[kind]++
					rep.ByClass[class]++
					if class != kindWant(kind) {
						rep.Wrong[kind]++
						if _, ok := rep.Examples[kind]; !ok {
							rep.Examples[kind] = fmt.Sprintf("%s: %s", class, e)
						}
					}
					mu.Unlock()
				}
			}()
		}
		for i := 0; i < count; i++ {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
	}
	newRep := func() *churnReport {
		return &churnReport{Kinds: map[string]int{}, Wrong: map[string]int{}, Examples: map[string]string{}, ByClass: map[probe.Class]int{}}
	}
	warm := max(n/20, 100)
	fmt.Printf("labcheck: churn warm-up, %d tasks\n", warm)
	run(warm, newRep())
	before, err := settled(base)
	if err != nil {
		return err
	}
	rep := newRep()
	rep.Tasks = n
	start := time.Now()
	run(n, rep)
	el := time.Since(start)
	after, err := settled(base)
	if err != nil {
		return err
	}
	rep.Elapsed, rep.PerTask = el.Round(time.Second).String(), (el / time.Duration(n)).Round(time.Microsecond).String()
	rep.Before, rep.After, rep.Devices, rep.Served = before.Process, after.Process, after.Devices, after.Served
	// Allowed drift: a few goroutines (HTTP keep-alive connections come
	// and go), one descriptor each for them, RSS noise from the Go heap.
	rep.Threshold = map[string]int64{"goroutines": 4, "fds": 4, "rss_bytes": 8 << 20}
	if d := after.Process.Goroutines - before.Process.Goroutines; d > 4 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("goroutines grew by %d", d))
	}
	if d := after.Process.FDs - before.Process.FDs; d > 4 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("open files grew by %d", d))
	}
	if d := after.Process.RSSBytes - before.Process.RSSBytes; d > 8<<20 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("RSS grew by %d KiB", d>>10))
	}
	if after.Process.Sessions != 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%d responder sessions still open", after.Process.Sessions))
	}
	for k, v := range rep.Wrong {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%d %s tasks ended otherwise (e.g. %s)", v, k, rep.Examples[k]))
	}
	for _, k := range churnKinds {
		if rep.Kinds[k.name] == 0 {
			rep.Problems = append(rep.Problems, "no "+k.name+" task ran")
		}
	}
	sort.Strings(rep.Problems)
	b, _ := json.MarshalIndent(rep, "", "  ")
	if out != "" {
		if err := os.WriteFile(out, b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("labcheck: churn %d tests (%d sessions) in %s (%s per test): %v\n", n, 2*n, rep.Elapsed, rep.PerTask, rep.Kinds)
	fmt.Printf("labcheck: worker goroutines %d -> %d, open files %d -> %d, RSS %d -> %d KiB, sessions left %d\n",
		before.Process.Goroutines, after.Process.Goroutines, before.Process.FDs, after.Process.FDs,
		before.Process.RSSBytes>>10, after.Process.RSSBytes>>10, after.Process.Sessions)
	if len(rep.Problems) > 0 {
		return fmt.Errorf("churn: %s", strings.Join(rep.Problems, "; "))
	}
	return nil
}

func kindWant(name string) probe.Class {
	for _, k := range churnKinds {
		if k.name == name {
			return k.want
		}
	}
	return ""
}

// taskClient outlasts a task's own deadline, so a stuck task shows as one.
var taskClient = http.Client{Timeout: 90 * time.Second}

func churnOne(base, api, dead, node string, i int) (string, probe.Class, string) {
	ep := probe.Endpoint{Device: "rxe0", Port: 1, GIDIndex: -1}
	t := wire.Task{SweepID: "churn", Round: i, Src: node, Dst: node, DstAPI: api,
		Rails:  []probe.RailPair{{Rail: 0, Src: ep, Dst: ep}},
		Params: probe.TestParams{LatencySize: 8, LatencyIters: 2, Warmup: 0, Timeout: 20 * time.Second},
		// Deadline bounds a task stuck for reasons of its own.
		Deadline: time.Now().Add(60 * time.Second)}
	kind := churnKinds[len(churnKinds)-1]
	for _, k := range churnKinds {
		if i%k.every == 0 {
			kind = k
			break
		}
	}
	kind.task(&t, api, dead)
	resp, err := taskClient.Post(base+"/v1/tasks", wire.ContentType, bytes.NewReader(wire.TaskMsg.Append(nil, &t)))
	if err != nil {
		return kind.name, "transport", err.Error()
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var res wire.TaskResult
	if err == nil {
		res, err = wire.TaskResultMsg.Decode(raw)
	}
	if err != nil || len(res.Rails) != 1 {
		return kind.name, "transport", fmt.Sprintf("HTTP %s: %v", resp.Status, err)
	}
	r := res.Rails[0]
	msg := ""
	if r.Error != nil {
		msg = r.Error.Error()
	}
	return kind.name, r.Class, msg
}

// settled waits until the worker has no session open and its goroutine
// count stopped moving (HTTP connections wind down), then reports it.
func settled(base string) (worker.HealthReply, error) {
	var h, prev worker.HealthReply
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := getJSON(base+"/v1/health", &h); err != nil {
			return h, err
		}
		if h.Process.Sessions == 0 && h.Process.Goroutines == prev.Process.Goroutines {
			return h, nil
		}
		if time.Now().After(deadline) {
			return h, fmt.Errorf("worker did not settle: %+v", h.Process)
		}
		prev = h
		time.Sleep(time.Second)
	}
}
