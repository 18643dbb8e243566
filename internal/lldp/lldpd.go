package lldp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// LLDPD asks a running lldpd which neighbours it has heard, through its
// client lldpcli. lldpd listens on every interface all the time, so its
// answer needs no wait.
type LLDPD struct {
	// Command is lldpcli's name or path; empty: "lldpcli" on $PATH.
	Command string
	// Socket is lldpd's control socket (lldpcli -u); empty: lldpd's
	// default, /run/lldpd.socket on Debian.
	Socket string
}

// Errors from LLDPD.Neighbors, wrapped in an *LLDPDError.
var (
	ErrNotRunning   = errors.New("lldpd not running")
	ErrNotInstalled = errors.New("lldpcli not found: lldpd is not installed")
	ErrNoAccess     = errors.New("no access to lldpd's control socket")
)

// LLDPDError is lldpcli failing: the command line, what went wrong and the
// last line lldpcli wrote to stderr.
type LLDPDError struct {
	Command string
	Err     error
	Stderr  string
}

func (e *LLDPDError) Error() string {
	s := e.Err.Error() + " (" + e.Command
	if e.Stderr != "" {
		s += ": " + e.Stderr
	}
	s += ")"
	switch {
	case errors.Is(e.Err, ErrNotRunning):
		s += ": start it (systemctl enable --now lldpd), or read LLDP frames instead"
	case errors.Is(e.Err, ErrNotInstalled):
		s += ": apt-get install lldpd (dnf install lldpd), or read LLDP frames instead"
	case errors.Is(e.Err, ErrNoAccess):
		s += ": run as root or in lldpd's group (_lldpd on Debian)"
	}
	return s
}

func (e *LLDPDError) Unwrap() error { return e.Err }

// Neighbors runs `lldpcli -f json0 show neighbors` and returns each
// interface's neighbours, an interface lldpd has heard nothing on being
// absent. json0, not json: json0 always puts arrays where there can be
// several values, so its shape does not change with the number of
// interfaces or neighbours (lldpcli(8)).
func (l LLDPD) Neighbors(ctx context.Context) (map[string][]Neighbor, error) {
	name := l.Command
	if name == "" {
		name = "lldpcli"
	}
	var args []string
	if l.Socket != "" {
		args = append(args, "-u", l.Socket)
	}
	args = append(args, "-f", "json0", "show", "neighbors")
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	line := strings.Join(append([]string{name}, args...), " ")
	if err != nil {
		return nil, lldpcliError(line, err, stderr.String())
	}
	ns, err := ParseLLDPCLI(out, time.Now())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", line, err)
	}
	return ns, nil
}

// lldpcliError classifies a failed lldpcli by its exit and its words: it
// says "unable to connect to socket" when nothing listens there.
func lldpcliError(line string, err error, stderr string) error {
	last := lastLine(stderr)
	var why error
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		why = ErrNotInstalled
	case strings.Contains(last, "Permission denied"):
		why = ErrNoAccess
	case strings.Contains(last, "unable to connect to socket"):
		why = ErrNotRunning
	default:
		why = fmt.Errorf("lldpcli failed: %w", err)
	}
	return &LLDPDError{Command: line, Err: why, Stderr: last}
}

// lastLine is lldpcli's last complaint without its log prefix (a time
// stamp and "[WARN/control]"): a worker reports it on every rescan, and a
// time in it would make every answer new.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return logPrefix.ReplaceAllString(strings.TrimSpace(lines[len(lines)-1]), "")
}

// logPrefix is lldpcli's "2026-11-29T11:05:42 [WARN/control] ".
var logPrefix = regexp.MustCompile(`^(\S+ )?\[[A-Z]+/[a-z_-]+\] `)
