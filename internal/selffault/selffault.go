// Package selffault recognises the tester's own resource failures — this
// process out of file descriptors or memory — so that they are reported as
// the tool's fault (a sweep that could not be judged, gate exit 3) and never
// as the fabric's. A validation tool that drains a cluster because it ran
// out of its own descriptors is worse than none.
//
// The record is process-wide on purpose: every socket of the process draws
// on the same RLIMIT_NOFILE, so one exhausted accept makes every test that
// ran beside it suspect, whichever goroutine saw the error.
package selffault

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Event is one resource failure this process saw.
type Event struct {
	Resource string // "file descriptors" or "memory"
	Op       string // what failed, e.g. "accepting a worker API connection"
	Err      string
	At       time.Time
	Budget   Budget
}

var (
	count atomic.Uint64
	mu    sync.Mutex
	last  Event
)

// Resource names the local resource err ran out of, or "" when err is not
// a resource failure of this host.
func Resource(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return "file descriptors"
	case errors.Is(err, syscall.ENOMEM), errors.Is(err, syscall.ENOBUFS):
		return "memory"
	}
	return ""
}

// Note records err if it is a resource failure of this process and reports
// whether it was. op says what was being done, for the operator.
func Note(op string, err error) bool {
	res := Resource(err)
	if res == "" {
		return false
	}
	ev := Event{Resource: res, Op: op, Err: err.Error(), At: time.Now(), Budget: ReadBudget()}
	mu.Lock()
	last = ev
	mu.Unlock()
	count.Add(1)
	return true
}

// Count is how many resource failures this process has seen; callers take
// it before a piece of work and compare after.
func Count() uint64 { return count.Load() }

// Last is the newest recorded failure, if any.
func Last() (Event, bool) {
	mu.Lock()
	defer mu.Unlock()
	return last, !last.At.IsZero()
}

// Cause says what happened, naming who ran out ("worker node-033", "the
// coordinator") and the limit in force.
func (e Event) Cause(who string) string {
	s := fmt.Sprintf("tester fault, not the fabric: %s ran out of %s while %s (%s)", who, e.Resource, e.Op, e.Err)
	if e.Resource == "file descriptors" && e.Budget.Soft > 0 {
		s += fmt.Sprintf("; open-file limit (RLIMIT_NOFILE) %d", e.Budget.Soft)
	}
	return s
}

// Fix says how to give the process what it lacked.
func (e Event) Fix() string {
	if e.Resource == "file descriptors" {
		want := max(4*e.Budget.Soft, 65536)
		return fmt.Sprintf("raise the open-file limit of the rdmamesh process to at least %d (systemd: LimitNOFILE=%d; "+
			"shell: ulimit -n %d; Kubernetes: the container runtime's nofile limit) and run the sweep again", want, want, want)
	}
	return "free memory on the host (or raise the container's memory limit) and run the sweep again"
}

// Budget is the process's open-file budget.
type Budget struct {
	Soft, Hard uint64
	Open       int // descriptors open now; -1 when /proc is not readable
}

// ReadBudget reads the limit and counts the open descriptors.
func ReadBudget() Budget {
	var b Budget
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil {
		b.Soft, b.Hard = rl.Cur, rl.Max
	}
	b.Open = openFDs()
	return b
}

func openFDs() int {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return -1
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return -1
	}
	return len(names) - 1 // the directory itself
}

// RaiseLimit lifts the soft open-file limit to the hard one and returns the
// budget in force. Go's runtime does the same at start on Linux; doing it
// here as well keeps the budget we log the one we run with on any platform.
func RaiseLimit() Budget {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil && rl.Cur < rl.Max {
		rl.Cur = rl.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
	return ReadBudget()
}
