//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rdmamesh/rdmamesh/cabling"
	"github.com/rdmamesh/rdmamesh/internal/api"
	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// cablingStatic is a static sweep on a coordinator that judges cabling:
// node-0003's two HCAs swapped, a cable between switches unseen.
type cablingStatic struct{ *static }

func (b cablingStatic) Cabling(sweep string) (*cabling.Report, api.CablingSource, bool) {
	rep := &cabling.Report{Planned: true, Counts: map[cabling.Verdict]int{cabling.Swapped: 2, cabling.NoEvidence: 1, cabling.OK: 13}}
	for _, p := range [][2]string{{"node-0003/mlx5_0", "node-0003/mlx5_1"}, {"node-0003/mlx5_1", "node-0003/mlx5_0"}} {
		rep.Ports = append(rep.Ports, cabling.Finding{Verdict: cabling.Swapped, End: p[0], Node: "node-0003", Expected: "leaf-r0-00:3",
			Found: "leaf-r1-00:3", With: p[1], Evidence: cabling.EvidenceHost, Action: "swap the cables of " + p[0] + " and " + p[1]})
	}
	rep.Ports = append(rep.Ports, cabling.Finding{Verdict: cabling.NoEvidence, End: "leaf-r0-00:5", Rail: 0, Expected: "spine-r0-00:1",
		Action: "read the LLDP tables of leaf-r0-00 and spine-r0-00"})
	return rep, api.CablingSource{Sweep: sweep, Workers: 8, Neighbors: 16, Paths: 40, SwitchTables: "not read"}, true
}

// TestUICabling: the Cabling tab lists the findings worst first, a
// swapped HCA with the other end, expected and found ports and its
// action, and the evidence the report came from, asking with the
// selected sweep's paths.
func TestUICabling(t *testing.T) {
	b := cablingStatic{newStatic(synth.MatrixWith(16, 2, synth.NoFaults))}
	url, _, _ := serve(t, b, "synthetic", "rdmamesh cabling", false)
	ctx := browser(t)
	t.Cleanup(func() { leave(t, ctx) })
	do(t, ctx, "open the Cabling view", chromedp.Navigate(url+"#cabling"))
	row := poll[string](t, ctx, "the swapped finding", `(() => {
		const tr = document.querySelector('#cabling tbody tr[data-verdict="swapped"]');
		return !document.getElementById("view-cabling").hidden && tr && tr.innerText; })()`)
	for _, want := range []string{"swapped", "node-0003/mlx5_0", "leaf-r0-00:3", "leaf-r1-00:3", "with node-0003/mlx5_1", "swap the cables"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q lacks %q", row, want)
		}
	}
	verdicts := within(t, ctx, 5*time.Second, "the rows", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#cabling tbody tr')].map((tr) => tr.dataset.verdict)`))
	if strings.Join(verdicts, ",") != "swapped,swapped,no-evidence" {
		t.Errorf("rows %v: want the two swapped HCAs, then the port without evidence; no ok port", verdicts)
	}
	summary := poll[string](t, ctx, "the sweep's paths as evidence", `(() => {
		const s = document.getElementById("cabling-source").textContent;
		return s.includes("sweep synthetic") && document.getElementById("cabling-summary").textContent + " | " + s; })()`)
	if !strings.Contains(summary, "2 swapped") || !strings.Contains(summary, "40 paths traced") {
		t.Errorf("summary %q", summary)
	}
	if n := within(t, ctx, 5*time.Second, "the page's count", chromedp.Evaluate[int](`window.rdmamesh.cabling.findings`)); n != 3 {
		t.Errorf("window.rdmamesh.cabling.findings = %d, want 3", n)
	}
	screenshot(t, ctx, "cabling")
}
