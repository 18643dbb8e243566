//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rdmamesh/rdmamesh/cluster"
	"github.com/rdmamesh/rdmamesh/internal/probe"
	"github.com/rdmamesh/rdmamesh/matrix"
	"github.com/rdmamesh/rdmamesh/topology"
	"github.com/rdmamesh/rdmamesh/web/internal/synth"
)

// The fat tree of the Fabric tests: 4 leaves and 2 spines per rail. A leaf's
// ports 1-4 take its nodes' HCAs, 5-6 go to spine 0 and 7-8 to spine 1, so
// leaf-r0-01:6 is its second cable to spine-r0-00 (whose port 4 it is).
const (
	fabricTree  = "nodes=16,rails=2,leaf=4,spines=2"
	fabricLeaf  = "leaf-r0-01:6"
	fabricSpine = "spine-r0-00:4"
)

type fabricSuspect struct {
	Kind      string   `json:"kind"`
	Ends      []string `json:"ends"`
	Switch    string   `json:"switch"`
	Verdict   string   `json:"verdict"`
	Reason    string   `json:"reason"`
	Fix       string   `json:"fix"`
	Direction string   `json:"direction"`
}

// TestUIFabric: a dead cable between a leaf and a spine of rail 0. After a
// sweep, the Fabric tab draws rail 0 with that cable's path marked as a
// failed suspect (and no other cable but the API's link suspects of rail 0)
// over the cables coloured by their share of bad tests (checkLinkShares),
// hovering it names it with the reason and its share, clicking it shows
// the fix and the tests that crossed it: the failed ones first, each
// opening its pair.
func TestUIFabric(t *testing.T) {
	_, topo, err := topology.GenerateFatTree(fabricTree)
	if err != nil {
		t.Fatal(err)
	}
	deadCable := -1
	for c := range topo.Cables {
		if topo.CableName(c) == fabricLeaf+" <-> "+fabricSpine {
			deadCable = c
		}
	}
	if deadCable < 0 {
		t.Fatalf("the fat tree %s has no cable %s <-> %s", fabricTree, fabricLeaf, fabricSpine)
	}
	start, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	p := probe.DefaultTestParams()
	p.LatencyIters = 200
	cl, err := cluster.Start(start, cluster.Options{Nodes: 16, Rails: 2, Preset: "roce-2x100", Seed: 11,
		Faults: []string{"cable=" + fabricLeaf + "~" + fabricSpine + ":down"}, TimeScale: 1, Listen: "127.0.0.1:0", Mode: "full",
		Params: p, PairTimeout: 5 * time.Second, Topology: topo,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	sw := sweepToEnd(t, cl.URL)

	// What the analysis blames: the cable as a link, and which other links
	// of rail 0 (their paths must be marked too, no more).
	m := getJSON[struct {
		Suspects  []fabricSuspect   `json:"suspects"`
		LinkLoads []matrix.LinkLoad `json:"link_loads"`
	}](t, cl.URL+"/api/v1/sweeps/"+sw.ID+"/matrix?cells=summary")
	var dead *fabricSuspect
	rail0Links := 0
	for i, s := range m.Suspects {
		t.Logf("suspect %s %v%s: %s, %s", s.Kind, s.Ends, s.Switch, s.Verdict, s.Reason)
		if s.Kind == "link" && len(s.Ends) == 2 && strings.Contains(s.Ends[0], "-r0-") {
			rail0Links++ // the tree's switches of rail 0 are leaf-r0-NN, spine-r0-NN
		}
		if s.Kind == "link" && strings.Contains(strings.Join(s.Ends, " "), fabricLeaf) && strings.Contains(strings.Join(s.Ends, " "), fabricSpine) {
			dead = &m.Suspects[i]
		}
	}
	if dead == nil {
		t.Fatalf("sweep %s names no link suspect %s ~ %s", sw.ID, fabricLeaf, fabricSpine)
	}

	ctx := browser(t)
	openDefault(t, ctx, cl.URL+"/")
	poll[bool](t, ctx, "the Fabric tab", `!document.getElementById("tab-fabric").hidden`)
	do(t, ctx, "open the Fabric tab", chromedp.Click(chromedp.ID("tab-fabric")))
	path := fmt.Sprintf(`document.querySelector('#fabric-svg path[data-ends~=%q][data-ends~=%q]')`, fabricLeaf, fabricSpine)
	class := poll[string](t, ctx, "the dead cable's path marked as a suspect",
		`(() => { const p = `+path+`; return p && p.classList.contains("suspect") && p.getAttribute("class"); })()`)
	if !strings.Contains(class, "sus-failed") {
		t.Errorf("the dead cable's path has class %q; want the failed suspect's sus-failed", class)
	}
	shown := within(t, ctx, 5*time.Second, "the plane and the marks", chromedp.Evaluate[struct {
		Plane   string `json:"plane"`
		Marked  int    `json:"marked"`
		Summary string `json:"summary"`
	}](`({plane: document.getElementById("fabric-plane").value, marked: document.querySelectorAll("#fabric-svg path.cable.suspect").length,
		summary: document.getElementById("fabric-summary").textContent})`))
	t.Logf("fabric view: %s", shown.Summary)
	if shown.Plane != "0" || !strings.Contains(shown.Summary, "4 leaves, 2 spines, 16 cables between switches, 16 HCAs") || shown.Marked != rail0Links {
		t.Errorf("fabric view shows plane %s (%q) with %d cables marked; want plane 0, 4 leaves, 2 spines, 16 cables, 16 HCAs, %d marked (the link suspects of rail 0)",
			shown.Plane, shown.Summary, shown.Marked, rail0Links)
	}
	screenshot(t, ctx, "30-fabric-link-suspect")
	checkLinkShares(t, ctx, topo, sw.ID, m.LinkLoads, deadCable)

	// Hover the cable's middle: its name and the reason.
	xy := within(t, ctx, 5*time.Second, "the cable's middle", chromedp.Evaluate[struct{ X, Y float64 }](`(() => {
		const p = `+path+`, q = p.getPointAtLength(p.getTotalLength() / 2), m = p.getScreenCTM();
		return {X: q.x * m.a + q.y * m.c + m.e, Y: q.x * m.b + q.y * m.d + m.f}; })()`))
	do(t, ctx, "hover the dead cable", chromedp.MouseEvent(chromedp.MouseMoved, xy.X, xy.Y))
	tip := poll[string](t, ctx, "the cable's tooltip",
		`(() => { const e = document.getElementById("tooltip"); return !e.hidden && e.textContent.includes("`+fabricLeaf+`") && e.textContent; })()`)
	if !strings.Contains(tip, fabricSpine) || !strings.Contains(tip, dead.Reason) {
		t.Errorf("tooltip %q lacks the cable's ends or the reason %q", tip, dead.Reason)
	}
	if want := shareLine(worseLoads(m.LinkLoads)[deadCable]); !strings.Contains(tip, want) {
		t.Errorf("tooltip %q does not say %q", tip, want)
	}
	screenshot(t, ctx, "36-fabric-link-shares")
	// Click it: the side panel says the reason and the fix.
	do(t, ctx, "click the dead cable", chromedp.MouseClickXY(xy.X, xy.Y))
	detail := poll[string](t, ctx, "the cable's details",
		`(() => { const d = document.getElementById("fabric-detail").textContent; return d.includes("`+fabricLeaf+`") && d.includes("Fix:") && d; })()`)
	if !strings.Contains(detail, dead.Reason) || (dead.Fix != "" && !strings.Contains(detail, "Fix: "+dead.Fix)) {
		t.Errorf("details %q lack the reason %q or the fix %q", detail, dead.Reason, dead.Fix)
	}
	if sel := within(t, ctx, 5*time.Second, "the selection", chromedp.Evaluate[bool](path+`.classList.contains("selected")`)); !sel {
		t.Error("the clicked cable is not drawn selected")
	}
	screenshot(t, ctx, "31-fabric-link-selected")

	// The healthy cables are one path, found under the pointer by the page:
	// hover the middle vertex of its first cable.
	xy = within(t, ctx, 5*time.Second, "a healthy cable's middle", chromedp.Evaluate[struct{ X, Y float64 }](`(() => {
		const d = document.querySelector("#fabric-svg path.cables").getAttribute("d").split("M")[1].split("L")[1].split(" ").map(Number);
		const m = document.getElementById("fabric-svg").getScreenCTM();
		return {X: d[0] * m.a + d[1] * m.c + m.e, Y: d[0] * m.b + d[1] * m.d + m.f}; })()`))
	do(t, ctx, "hover a healthy cable", chromedp.MouseEvent(chromedp.MouseMoved, xy.X, xy.Y))
	tip = poll[string](t, ctx, "the healthy cable's tooltip", `(() => { const e = document.getElementById("tooltip");
		return !e.hidden && e.textContent.includes("not a suspect") && document.querySelector("#fabric-svg path.cable.hover") && e.textContent; })()`)
	if !strings.Contains(tip, "⇄") || !strings.Contains(tip, "cable between leaf leaf-r0-") {
		t.Errorf("healthy cable's tooltip %q does not name the cable", tip)
	}
	firstDrawn := slices.IndexFunc(topo.Cables, func(cb topology.Cable) bool { return !cb.A.IsHCA() && !cb.B.IsHCA() })
	want := "no routed bad test crossed it"
	if l, ok := worseLoads(m.LinkLoads)[firstDrawn]; ok {
		want = shareLine(l)
	}
	if !strings.Contains(tip, want) {
		t.Errorf("%s's tooltip %q does not say %q", topo.CableName(firstDrawn), tip, want)
	}

	// The dead cable is still selected: the tests that crossed it, all
	// failed (it drops both ways). Its sibling to the same spine carries
	// healthy tests and the failed ones whose return path took the dead
	// cable: bad first, then good.
	cells := getJSON[matrixCells](t, cl.URL+"/api/v1/sweeps/"+sw.ID+"/matrix")
	checkLinkCells(t, ctx, topo, deadCable, cells, false)
	do(t, ctx, "move the pointer off the drawing", chromedp.MouseEvent(chromedp.MouseMoved, 2, 2))
	screenshot(t, ctx, "33-fabric-link-cells")
	sibling, at := -1, 0 // the sibling and its place among the drawn cables of rail 0
	for c, cb := range topo.Cables {
		if cb.A.IsHCA() || cb.B.IsHCA() || topo.Switches[cb.A.Switch].Plane != 0 {
			continue
		}
		if topo.CableName(c) == fabricLeaf[:len(fabricLeaf)-1]+"5 <-> "+fabricSpine[:len(fabricSpine)-1]+"3" {
			sibling = c
			break
		}
		at++
	}
	if sibling < 0 {
		t.Fatalf("the fat tree %s has no cable %s5 to %s3", fabricTree, fabricLeaf[:len(fabricLeaf)-1], fabricSpine[:len(fabricSpine)-1])
	}
	xy = within(t, ctx, 5*time.Second, "the sibling cable's middle", chromedp.Evaluate[struct{ X, Y float64 }](fmt.Sprintf(`(() => {
		const d = document.querySelector("#fabric-svg path.cables").getAttribute("d").split("M")[%d].split("L")[1].split(" ").map(Number);
		const m = document.getElementById("fabric-svg").getScreenCTM();
		return {X: d[0] * m.a + d[1] * m.c + m.e, Y: d[0] * m.b + d[1] * m.d + m.f}; })()`, at+1)))
	do(t, ctx, "click the sibling cable", chromedp.MouseClickXY(xy.X, xy.Y))
	checkLinkCells(t, ctx, topo, sibling, cells, true)
	do(t, ctx, "move the pointer off the drawing", chromedp.MouseEvent(chromedp.MouseMoved, 2, 2))
	screenshot(t, ctx, "34-fabric-link-cells-mixed")
	first := within(t, ctx, 5*time.Second, "the first test listed", chromedp.Evaluate[string](
		`(() => { const li = document.querySelector("#fabric-cells li.link-cell"); return li.dataset.src + " ⇄ " + li.dataset.dst; })()`))
	// A listed test opens its pair, as a click on the heatmap does.
	do(t, ctx, "click the first test through the cable", chromedp.Click(chromedp.CSS("#fabric-cells li.link-cell")))
	title := poll[string](t, ctx, "the pair's drill-down", `(() => { const d = document.getElementById("drill");
		return d.open && !document.getElementById("drill-body").textContent.includes("loading") && document.getElementById("drill-title").textContent; })()`)
	if title != first {
		t.Errorf("the drill-down shows %q; want the pair %s", title, first)
	}
	do(t, ctx, "close the drill-down", chromedp.Click(chromedp.ID("drill-close")))

	// The heatmap's bands are the leaves of rail 0, as cabled: the demo's
	// nodes carry no labels.
	do(t, ctx, "open the Heatmap tab", chromedp.Click(chromedp.ID("tab-heatmap")))
	bands := poll[string](t, ctx, "the heatmap's leaf bands", `(() => { const g = window.rdmamesh.grid;
		return g && document.getElementById("heatmap").dataset.painted && g.group_label + ": " + g.groups.map((x) => x.name + " " + x.count).join(", "); })()`)
	if want := "leaf of rail 0: leaf-r0-00 4, leaf-r0-01 4, leaf-r0-02 4, leaf-r0-03 4"; bands != want {
		t.Errorf("heatmap bands %q; want %q", bands, want)
	}
	screenshot(t, ctx, "35-heatmap-leaf-bands")
}

// matrixCells is the matrix JSON's cells, with the flows their paths
// were picked by.
type matrixCells struct {
	Cells []struct {
		Src      string            `json:"src"`
		Dst      string            `json:"dst"`
		Rail     int               `json:"rail"`
		Verdict  string            `json:"verdict"`
		Flow     uint16            `json:"flow"`
		BackFlow uint16            `json:"back_flow"`
		Retests  []json.RawMessage `json:"retests"`
	} `json:"cells"`
}

// linkCellShown is one test of the Fabric view's list for the selected cable.
type linkCellShown struct {
	Src  string `json:"src"`
	Dst  string `json:"dst"`
	Rail string `json:"rail"`
	Path string `json:"path"` // the verdict of its path over the cable
}

// checkLinkCells: with cable selected, the side panel lists the tests that
// crossed it. Which those are is worked out here from the matrix's cells
// and their flows, routed over the topology: every failed one must be
// listed as failed, before every ok one (wantOK: there are some), and
// every listed one must have crossed the cable.
func checkLinkCells(t *testing.T, ctx context.Context, topo *topology.Topology, cable int, m matrixCells, wantOK bool) {
	t.Helper()
	crosses := func(src, dst string, rail int, flow, back uint16) bool {
		hs, ok1 := topo.HCA(src, rail)
		hd, ok2 := topo.HCA(dst, rail)
		if !ok1 || !ok2 {
			return false
		}
		there, _ := topo.Route(nil, hs, hd, uint32(flow))
		again, _ := topo.Route(nil, hd, hs, uint32(back))
		return slices.ContainsFunc(append(there, again...), func(l topology.Link) bool { return l.Cable() == cable })
	}
	key := func(src, dst string, rail int) string { return fmt.Sprintf("%s>%s/%d", src, dst, rail) }
	through := map[string]bool{}  // crossed the cable
	failed := map[string]bool{}   // crossed it and failed
	retested := map[string]bool{} // crossed it, ok after retests: its first attempt may have failed there
	for _, c := range m.Cells {
		if c.Verdict == "untested" || !crosses(c.Src, c.Dst, c.Rail, c.Flow, c.BackFlow) {
			continue
		}
		k := key(c.Src, c.Dst, c.Rail)
		through[k] = true
		failed[k] = c.Verdict != "ok"
		retested[k] = c.Verdict == "ok" && len(c.Retests) > 0
	}
	nFailed := 0
	for _, f := range failed {
		if f {
			nFailed++
		}
	}
	if nFailed == 0 {
		t.Fatalf("no failed test crossed %s: nothing for the list to put first", topo.CableName(cable))
	}

	shown := poll[[]linkCellShown](t, ctx, "the tests through "+topo.CableName(cable), fmt.Sprintf(`(() => {
		const c = window.rdmamesh.fabric.cells, items = [...document.querySelectorAll("#fabric-cells li.link-cell")];
		return !document.getElementById("fabric-cells-panel").hidden && c && c.key.split("|")[1] === "%d" && c.listed === items.length && items.length &&
			items.map((li) => ({src: li.dataset.src, dst: li.dataset.dst, rail: li.dataset.rail, path: li.dataset.path})); })()`, cable))
	summary := within(t, ctx, 5*time.Second, "the list's summary", chromedp.Evaluate[string](`document.getElementById("fabric-cells").querySelector("p").textContent`))
	t.Logf("tests through %s: %s (%d listed)", topo.CableName(cable), summary, len(shown))
	if !strings.Contains(summary, fmt.Sprintf("%d tests crossed it", len(through))) {
		t.Errorf("summary %q; want %d tests crossed it", summary, len(through))
	}
	listedFailed, ok := 0, 0
	for i, c := range shown {
		k := fmt.Sprintf("%s>%s/%s", c.Src, c.Dst, c.Rail)
		switch {
		case !through[k]:
			t.Errorf("item %d, %s (%s), did not cross the cable by its flows", i, k, c.Path)
		case c.Path == "ok":
			ok++
			if failed[k] {
				t.Errorf("item %d, %s, failed but is listed ok", i, k)
			}
		case c.Path == "failed" && ok > 0:
			t.Errorf("item %d, %s, failed, is listed after %d ok tests", i, k, ok)
		case c.Path == "failed":
			listedFailed++
			if !failed[k] && !retested[k] {
				t.Errorf("item %d, %s, is listed failed but measured ok and was not retested", i, k)
			}
		}
	}
	if listedFailed < nFailed || (ok > 0) != wantOK || len(shown) != len(through) {
		t.Errorf("listed %d failed and %d ok tests of %d; want all %d failed, then %d ok", listedFailed, ok, len(shown), nFailed, len(through)-nFailed)
	}
}

// TestUIFabricHiddenWithoutTopology: a coordinator without a topology
// answers /api/v1/topology with 404; the page then hides the Fabric tab, and
// the view, opened by its address, says why.
func TestUIFabricHiddenWithoutTopology(t *testing.T) {
	url := serveStatic(t, synth.MatrixWith(16, 2, synth.NoFaults), false)
	ctx := browser(t)
	openDefault(t, ctx, url)
	status := poll[string](t, ctx, "the topology's answer",
		`(() => { const s = window.rdmamesh.fabric.status; return ["none", "ready", "error"].includes(s) && s; })()`)
	if status != "none" {
		t.Fatalf("fabric status %q without a topology; want none", status)
	}
	if hidden := within(t, ctx, 5*time.Second, "the tab", chromedp.Evaluate[bool](`document.getElementById("tab-fabric").hidden`)); !hidden {
		t.Error("the Fabric tab shows on a coordinator without a topology")
	}
	within(t, ctx, 5*time.Second, "open #fabric", chromedp.Evaluate[bool](`location.hash = "#fabric"; true`))
	text := poll[string](t, ctx, "the explanation", `(() => {
		const s = document.getElementById("fabric-summary").textContent;
		return !document.getElementById("view-fabric").hidden && window.rdmamesh.fabric.status === "none" && s.includes("no topology") && s; })()`)
	if !strings.Contains(text, "coordinator.topology") {
		t.Errorf("explanation %q does not say how to give a topology", text)
	}
	if v := within(t, ctx, 5*time.Second, "the panels", chromedp.Evaluate[bool](
		`document.getElementById("fabric-panels").hidden && document.getElementById("tab-fabric").hidden`)); !v {
		t.Error("the Fabric view draws or its tab shows without a topology")
	}
}

// topoStatic is a static sweep on a coordinator with a topology.
type topoStatic struct {
	*static
	t *topology.Topology
}

func (b topoStatic) Topology() *topology.Topology { return b.t }

// BenchmarkUIFabric draws the Fabric view of large generated trees (a
// 2-tier plane of 512 leaves x 16 spines with 2 uplinks per spine: 16,384
// cables; a 3-tier one of 8 pods) with a link, a switch and a cable suspect
// on each and a share of bad tests on every cable, and reports draw-ms,
// the page's own measure of the layout and the SVG build, and mark-ms, of
// colouring the shares and suspects over it; the screenshots show how
// such a plane reads.
func BenchmarkUIFabric(b *testing.B) {
	for _, c := range []struct {
		name, tree string
		link       [2]string
		sw, host   string
		hostEnds   [2]string
	}{
		{"512-leaves", "nodes=16384,rails=1,leaf=32,spines=16", [2]string{"leaf-r0-100:48", "spine-r0-07:202"}, "spine-r0-03",
			"node-00050", [2]string{"node-00050/mlx5_0", "leaf-r0-01:18"}},
		{"8-pods", "nodes=512,rails=1,leaf=16,spines=4,pods=8,cores=8", [2]string{"leaf-r0-p2-01:18", "spine-r0-p2-01:6"}, "core-r0-05",
			"node-003", [2]string{"node-003/mlx5_0", "leaf-r0-p0-00:3"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ft, err := topology.ParseFatTree(c.tree)
			if err != nil {
				b.Fatal(err)
			}
			topo, err := ft.Generate()
			if err != nil {
				b.Fatal(err)
			}
			m := synth.MatrixWith(16, 1, synth.NoFaults)
			m.Healthy, m.LinkLoads = false, everyCableLoaded(topo)
			m.Suspects = append(m.Suspects,
				matrix.Suspect{Kind: "link", Ends: c.link[:], Direction: "one-way", Verdict: matrix.VerdictFailed, Reason: "a synthetic link suspect", Fix: "none", Bad: 9, Total: 10},
				matrix.Suspect{Kind: "switch", Switch: c.sw, Verdict: matrix.VerdictSlowLatency, Reason: "a synthetic switch suspect", Bad: 5, Total: 50},
				matrix.Suspect{Kind: "cable", Node: c.host, Device: "mlx5_0", Ends: c.hostEnds[:], Verdict: matrix.VerdictLowBandwidth, Reason: "a synthetic cable suspect", Bad: 5, Total: 15})
			url, _, _ := serve(b, topoStatic{newStatic(m), topo}, "synthetic", "rdmamesh fabric "+c.name, false)
			ctx := browser(b)
			b.Cleanup(func() { leave(b, ctx) })
			var ms struct{ Draw, Mark float64 }
			for i := 0; i < b.N; i++ {
				do(b, ctx, "open the UI", chromedp.Navigate(url+"/#fabric"))
				ms = poll[struct{ Draw, Mark float64 }](b, ctx, "the marked fabric", `(() => { const f = window.rdmamesh.fabric;
					return f.drawn && f.marked >= 3 && f.loads.n && document.querySelectorAll("#fabric-svg path.loads").length === 4 &&
						{Draw: f.drawMs, Mark: f.markMs}; })()`)
			}
			b.ReportMetric(ms.Draw, "draw-ms")
			b.ReportMetric(ms.Mark, "mark-ms")
			screenshot(b, ctx, "32-fabric-"+c.name)
		})
	}
}
