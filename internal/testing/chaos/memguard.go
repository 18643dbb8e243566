package chaos

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memGuard ends the run cleanly before memory gets out of hand on a shared
// machine: every quarter second it reads the resident set of this process
// and of every child, and cancels the run (cause: which process, how much)
// once their sum passes the limit. The run then stops every process and
// reports the breach as a violation.
type memGuard struct {
	limit  uint64
	pids   func() map[string]int // name → pid of the children
	cancel context.CancelCauseFunc

	mu   sync.Mutex
	peak uint64 // highest sum seen
	hit  error
	stop chan struct{}
	done chan struct{}
}

func startMemGuard(limit uint64, pids func() map[string]int, cancel context.CancelCauseFunc) *memGuard {
	g := &memGuard{limit: limit, pids: pids, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{})}
	go g.loop()
	return g
}

func (g *memGuard) loop() {
	defer close(g.done)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		if err := g.check(); err != nil {
			g.mu.Lock()
			g.hit = err
			g.mu.Unlock()
			g.cancel(err)
			return
		}
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
	}
}

func (g *memGuard) check() error {
	self := rssOf("self")
	sum, parts := self, []string{fmt.Sprintf("driver %s", mb(self))}
	for name, pid := range g.pids() {
		if pid <= 0 {
			continue
		}
		r := rssOf(strconv.Itoa(pid))
		sum += r
		parts = append(parts, fmt.Sprintf("%s %s", name, mb(r)))
	}
	g.mu.Lock()
	g.peak = max(g.peak, sum)
	g.mu.Unlock()
	if g.limit > 0 && sum > g.limit {
		return fmt.Errorf("memory guard: resident memory %s passed the limit %s (%s): run stopped", mb(sum), mb(g.limit), strings.Join(parts, ", "))
	}
	return nil
}

// Stop ends the guard; it returns the highest sum seen and the breach, if
// there was one.
func (g *memGuard) Stop() (uint64, error) {
	select {
	case <-g.stop:
	default:
		close(g.stop)
	}
	<-g.done
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak, g.hit
}

// rssOf reads VmRSS of /proc/<pid>/status in bytes; 0 when the process is
// gone or /proc is missing.
func rssOf(pid string) uint64 { return procField(pid, "VmRSS") }

// procField reads a "Name:   1234 kB" field of /proc/<pid>/status in bytes.
func procField(pid, field string) uint64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		kb, _ := strconv.ParseUint(f[0], 10, 64)
		return kb << 10
	}
	return 0
}

func mb(b uint64) string { return fmt.Sprintf("%d MB", b>>20) }
