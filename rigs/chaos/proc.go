package chaos

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one child process. Its output goes to a log file that survives
// restarts (appended), so a failing run can be read after the fact.
type proc struct {
	name string
	bin  string
	log  string // path

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the current incarnation has exited
	args []string
}

// start runs bin with args. It returns once the process exists; whether it
// came up is the caller's to check (it polls the process's HTTP API).
func (p *proc) start(args []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !closed(p.done) {
		return fmt.Errorf("%s is already running (pid %d)", p.name, p.cmd.Process.Pid)
	}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "=== %s start %s: %s %s\n", time.Now().Format(time.RFC3339Nano), p.name, p.bin, strings.Join(args, " "))
	cmd := exec.Command(p.bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(done)
	}()
	p.cmd, p.done, p.args = cmd, done, args
	return nil
}

func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// running reports whether the current incarnation is alive.
func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && !closed(p.done)
}

func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// exited returns a channel closed when the current incarnation ends.
func (p *proc) exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	return p.done
}

// signal sends sig and, for SIGKILL, waits (bounded) until the process is
// reaped, so its ports are free and its sockets reset when this returns.
func (p *proc) signal(sig syscall.Signal) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || closed(done) {
		return nil
	}
	if err := cmd.Process.Signal(sig); err != nil && !closed(done) {
		return fmt.Errorf("signal %s to %s: %w", sig, p.name, err)
	}
	if sig != syscall.SIGKILL {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) still not reaped 10s after SIGKILL", p.name, cmd.Process.Pid)
	}
}

// kill is kill -9.
func (p *proc) kill() error { return p.signal(syscall.SIGKILL) }

// stop asks politely, then kills after grace.
func (p *proc) stop(grace time.Duration) {
	if err := p.signal(syscall.SIGTERM); err != nil {
		_ = p.kill()
		return
	}
	select {
	case <-p.exited():
	case <-time.After(grace):
		_ = p.kill()
	}
}

// tail returns the last n lines of the log, for failure reports.
func (p *proc) tail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// bindFailed reports whether the last incarnation died because a port was
// taken, the one start failure worth retrying with other ports.
func (p *proc) bindFailed() bool {
	return strings.Contains(p.tail(5), "address already in use")
}
