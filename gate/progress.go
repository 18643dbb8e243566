package gate

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rdmamesh/rdmamesh/internal/api"
)

// progress shows a running sweep. On a terminal it redraws one line in
// place (carriage return, no newline until the end); in a CI log, where a
// redrawn line would become hundreds of lines, it prints a plain line at
// most every `every`, plus the first and the last.
type progress struct {
	w       io.Writer
	tty     bool
	every   time.Duration
	now     func() time.Time
	last    time.Time
	printed string // last line shown
	width   int    // of the last TTY line, to blank leftovers
}

const barWidth = 30

func newProgress(w io.Writer, o Options) *progress {
	p := &progress{w: w, tty: o.TTY, every: o.ProgressEvery, now: o.Now}
	if p.every <= 0 {
		p.every = 5 * time.Second
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p
}

func (p *progress) update(info api.SweepInfo) {
	line := progressLine(info, p.tty)
	if line == p.printed {
		return
	}
	if p.tty {
		pad := ""
		if n := p.width - len(line); n > 0 {
			pad = strings.Repeat(" ", n)
		}
		fmt.Fprint(p.w, "\r"+line+pad)
		p.width, p.printed = len(line), line
		return
	}
	now := p.now()
	final := info.State != api.SweepRunning
	if p.printed != "" && !final && now.Sub(p.last) < p.every {
		return
	}
	fmt.Fprintln(p.w, line)
	p.last, p.printed = now, line
}

// finish ends a TTY bar's line so the summary starts on its own.
func (p *progress) finish() {
	if p.tty && p.printed != "" {
		fmt.Fprintln(p.w)
		p.printed = ""
	}
}

func progressLine(info api.SweepInfo, bar bool) string {
	frac := 0.0
	switch {
	case info.Cells > 0:
		frac = float64(info.CellsDone) / float64(info.Cells)
	case info.Rounds > 0:
		frac = float64(info.RoundsDone) / float64(info.Rounds)
	}
	frac = max(0, min(1, frac))
	text := fmt.Sprintf("sweep %s: round %d/%d, cells %d/%d (%d%%)",
		info.ID, info.RoundsDone, info.Rounds, info.CellsDone, info.Cells, int(100*frac))
	if !bar {
		return text
	}
	n := int(frac * barWidth)
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", barWidth-n) + "] " + text
}
