package scale

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Median returns the run whose sweep wall time is the median, with every
// other figure replaced by its own median over the runs, so one noisy run
// cannot skew a column.
func Median(runs []Result) Result {
	if len(runs) == 0 {
		return Result{}
	}
	m := runs[0]
	md := func(get func(Result) time.Duration) time.Duration {
		v := make([]time.Duration, len(runs))
		for i, r := range runs {
			v[i] = get(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	mu := func(get func(Result) uint64) uint64 {
		return uint64(md(func(r Result) time.Duration { return time.Duration(get(r)) }))
	}
	mi := func(get func(Result) int64) int64 {
		return int64(md(func(r Result) time.Duration { return time.Duration(get(r)) }))
	}
	m.Setup = md(func(r Result) time.Duration { return r.Setup })
	m.Settle = md(func(r Result) time.Duration { return r.Settle })
	m.Sweep = md(func(r Result) time.Duration { return r.Sweep })
	m.SweepCPU = md(func(r Result) time.Duration { return r.SweepCPU })
	m.Overhead.Median = md(func(r Result) time.Duration { return r.Overhead.Median })
	m.Overhead.P99 = md(func(r Result) time.Duration { return r.Overhead.P99 })
	m.Dispatch.Median = md(func(r Result) time.Duration { return r.Dispatch.Median })
	m.Commit.Median = md(func(r Result) time.Duration { return r.Commit.Median })
	m.Commit.P99 = md(func(r Result) time.Duration { return r.Commit.P99 })
	m.EntryBytes.Median = md(func(r Result) time.Duration { return r.EntryBytes.Median })
	m.MatrixBuild = md(func(r Result) time.Duration { return r.MatrixBuild })
	m.SnapshotTime = md(func(r Result) time.Duration { return r.SnapshotTime })
	m.StartRSS = mu(func(r Result) uint64 { return r.StartRSS })
	m.PeakRSS = mu(func(r Result) uint64 { return r.PeakRSS })
	m.PeakHeap = mu(func(r Result) uint64 { return r.PeakHeap })
	m.HoldRSS = mu(func(r Result) uint64 { return r.HoldRSS })
	m.HoldHeap = mu(func(r Result) uint64 { return r.HoldHeap })
	m.HoldRSSFile = mu(func(r Result) uint64 { return r.HoldRSSFile })
	m.FSMHeap = mu(func(r Result) uint64 { return r.FSMHeap })
	m.MatrixHeap = mu(func(r Result) uint64 { return r.MatrixHeap })
	m.MatrixPeakRSS = mu(func(r Result) uint64 { return r.MatrixPeakRSS })
	m.RaftLogBytes = mi(func(r Result) int64 { return r.RaftLogBytes })
	m.RaftFileBytes = mi(func(r Result) int64 { return r.RaftFileBytes })
	m.SnapshotBytes = mi(func(r Result) int64 { return r.SnapshotBytes })
	m.MatrixJSON = mi(func(r Result) int64 { return r.MatrixJSON })
	m.MatrixGzip = mi(func(r Result) int64 { return r.MatrixGzip })
	m.PayloadTime = md(func(r Result) time.Duration { return r.PayloadTime })
	m.PayloadPeakRSS = mu(func(r Result) uint64 { return r.PayloadPeakRSS })
	m.UIFirstPaint = mi(func(r Result) int64 { return r.UIFirstPaint })
	m.UIServe = md(func(r Result) time.Duration { return r.UIServe })
	return m
}

var columns = []struct {
	head string
	get  func(r Result) string
}{
	{"mode", func(r Result) string {
		m := map[bool]string{false: "full", true: "control"}[r.Control]
		if r.TCP {
			m += " (tcp)"
		}
		return m
	}},
	{"pattern", func(r Result) string { return cmp.Or(r.Pattern, "all-pairs") }},
	{"nodes", func(r Result) string { return fmt.Sprint(r.Nodes) }},
	{"rails", func(r Result) string { return fmt.Sprint(r.Rails) }},
	{"cells", func(r Result) string { return fmt.Sprint(r.Cells) }},
	{"rounds", func(r Result) string { return fmt.Sprint(r.Rounds) }},
	{"links covered", func(r Result) string {
		if r.Links == 0 {
			return "–"
		}
		return fmt.Sprintf("%d/%d", r.LinksCovered, r.Links)
	}},
	{"gossip settle", func(r Result) string { return secs(r.Settle) }},
	{"sweep wall", func(r Result) string { return secs(r.Sweep) }},
	{"sweep CPU", func(r Result) string { return secs(r.SweepCPU) }},
	{"overhead/round p50", func(r Result) string { return ms(r.Overhead.Median) }},
	{"overhead/round p99", func(r Result) string { return ms(r.Overhead.P99) }},
	{"commit p50", func(r Result) string { return ms(r.Commit.Median) }},
	{"entry/round", func(r Result) string { return kb(int64(r.EntryBytes.Median)) }},
	{"RSS at sweep start (all)", func(r Result) string { return mb(int64(r.StartRSS)) }},
	{"peak RSS (all)", func(r Result) string { return mb(int64(r.PeakRSS)) }},
	{"peak heap (all)", func(r Result) string { return mb(int64(r.PeakHeap)) }},
	{"Go memory limit", func(r Result) string { return mbOrDash(int64(r.MemoryLimit)) }},
	{"coord RSS holding", func(r Result) string { return mb(int64(r.HoldRSS)) }},
	{"coord RSS holding, files", func(r Result) string { return mb(int64(r.HoldRSSFile)) }},
	{"coord heap holding", func(r Result) string { return mb(int64(r.HoldHeap)) }},
	{"FSM heap", func(r Result) string { return mb(int64(r.FSMHeap)) }},
	{"matrix heap", func(r Result) string { return mb(int64(r.MatrixHeap)) }},
	{"matrix read after", func(r Result) string { return secs(r.MatrixBuild) }},
	{"matrix peak RSS", func(r Result) string { return mb(int64(r.MatrixPeakRSS)) }},
	{"raft log", func(r Result) string { return mb(r.RaftLogBytes) }},
	{"raft files", func(r Result) string { return mb(r.RaftFileBytes) }},
	{"snapshot", func(r Result) string { return mb(r.SnapshotBytes) }},
	// Bytes per directed cell: what each part of the coordinator costs as
	// the fabric grows (cells grow with N², the rest should not).
	{"B/cell RSS holding", func(r Result) string { return perCell(int64(r.HoldRSS), r.Cells) }},
	{"B/cell FSM heap", func(r Result) string { return perCell(int64(r.FSMHeap), r.Cells) }},
	{"B/cell raft log", func(r Result) string { return perCell(r.RaftLogBytes, r.Cells) }},
	{"B/cell snapshot", func(r Result) string { return perCell(r.SnapshotBytes, r.Cells) }},
	{"matrix JSON", func(r Result) string { return mbOrDash(r.MatrixJSON) }},
	{"matrix JSON gz", func(r Result) string { return mbOrDash(r.MatrixGzip) }},
	{"matrix JSON time", func(r Result) string { return secsOrDash(r.PayloadTime) }},
	{"matrix JSON peak RSS", func(r Result) string { return mbOrDash(int64(r.PayloadPeakRSS)) }},
	{"live reader polls / analyses", func(r Result) string {
		if r.ReaderPolls == 0 {
			return "–"
		}
		return fmt.Sprintf("%d / %d", r.ReaderPolls, r.ReaderMatrices)
	}},
	{"UI first paint gz", func(r Result) string { return kb(r.UIFirstPaint) }},
	{"UI first paint served, cold", func(r Result) string { return ms(r.UIServe) }},
}

// Table writes results as a Markdown table.
func Table(w io.Writer, rs []Result) {
	var head, rule []string
	for _, c := range columns {
		head = append(head, c.head)
		rule = append(rule, strings.Repeat("-", 3))
	}
	fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(rule, "|"))
	for _, r := range rs {
		var row []string
		for _, c := range columns {
			row = append(row, c.get(r))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
func ms(d time.Duration) string   { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
func kb(b int64) string           { return fmt.Sprintf("%.1f KB", float64(b)/1e3) }
func mb(b int64) string           { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

func perCell(b int64, cells int) string {
	if cells <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(b)/float64(cells))
}

func mbOrDash(b int64) string {
	if b == 0 {
		return "–"
	}
	return mb(b)
}

func secsOrDash(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return secs(d)
}
