package idle

import (
	"fmt"
	"io"
	"time"
)

// Targets for an idle worker in a 1,024-member pool: the table's last
// column says whether a run met both.
const (
	TargetCPU = 0.01     // of one core
	TargetRSS = 50 << 20 // bytes
)

// Table writes results as a Markdown table, one row a run.
func Table(w io.Writer, rs []Result) {
	fmt.Fprintln(w, "| members | gossip key | live probing | worker CPU, % of a core | RSS mean / max | VmHWM idle / incl. join | "+
		"UDP in / out, packets/s | UDP in / out, bytes/s | push/pulls in / out (KB) | TCP pings in / out | pool's pings answered | harness CPU, RSS | < 1%, < 50 MB |")
	fmt.Fprintln(w, "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rs {
		s, t := r.Window.Seconds(), r.Traffic
		verdict := "met"
		if r.CPU >= TargetCPU || max(r.RSSMax, r.HWM) >= TargetRSS {
			verdict = "**missed**"
		}
		fmt.Fprintf(w, "| %d | %s | %s | %.3f%% | %.1f / %.1f MB | %.1f / %.1f MB | %.2f / %.2f | %.0f / %.0f | %d / %d (%.0f) | %d / %d | %d / %d | %.0f%%, %.0f MB | %s |\n",
			r.Members, onOff(r.Key), liveCol(r), 100*r.CPU, mib(r.RSSMean), mib(r.RSSMax), mib(r.HWM), mib(max(r.HWM, r.JoinHWM)),
			float64(t.PacketsIn)/s, float64(t.PacketsOut)/s, float64(t.BytesIn)/s, float64(t.BytesOut)/s,
			t.PushPullsIn, t.PushPulls, float64(t.StreamBytes)/1024, t.TCPPingsIn, t.TCPPingsOut, r.Acked, r.Pings, 100*r.HarnessCPU, mib(r.HarnessRSS), verdict)
	}
}

// Notes writes what each run took to set up, below the table.
func Notes(w io.Writer, rs []Result) {
	for _, r := range rs {
		comp := "uncompressed"
		if r.PeerCompression {
			comp = "compressed"
		}
		fmt.Fprintf(w, "- %d members, key %s: pool formed in %s (peers' gossip %s); the worker settled in %s using %.2f s of CPU "+
			"(its join); measured %s, busiest 10 s %.2f%% of a core; at the end it saw %d members and the peers %d..%d\n",
			r.Members, onOff(r.Key), r.Form.Round(time.Second), comp, r.Join.Round(time.Second), r.JoinCPU.Seconds(),
			r.Window.Round(time.Second), 100*r.CPUMax, r.WorkerSees, r.PeersMin, r.PeersMax)
	}
}

func liveCol(r Result) string {
	if !r.Live {
		return "no plan"
	}
	return fmt.Sprintf("%.0f probes/s", r.ProbeRate)
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
