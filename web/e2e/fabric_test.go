//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"log/slog"
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
// failed suspect (and no other cable but the API's link suspects of rail 0),
// hovering it names it with the reason, clicking it shows the fix.
func TestUIFabric(t *testing.T) {
	ft, err := topology.ParseFatTree(fabricTree)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := ft.Generate()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for c := range topo.Cables {
		found = found || topo.CableName(c) == fabricLeaf+" <-> "+fabricSpine
	}
	if !found {
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
		Suspects []fabricSuspect `json:"suspects"`
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
// on each, and reports draw-ms, the page's own measure of the layout and
// the SVG build; the screenshots show how such a plane reads.
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
			m.Suspects = append(m.Suspects,
				matrix.Suspect{Kind: "link", Ends: c.link[:], Direction: "one-way", Verdict: matrix.VerdictFailed, Reason: "a synthetic link suspect", Fix: "none", Bad: 9, Total: 10},
				matrix.Suspect{Kind: "switch", Switch: c.sw, Verdict: matrix.VerdictSlowLatency, Reason: "a synthetic switch suspect", Bad: 5, Total: 50},
				matrix.Suspect{Kind: "cable", Node: c.host, Device: "mlx5_0", Ends: c.hostEnds[:], Verdict: matrix.VerdictLowBandwidth, Reason: "a synthetic cable suspect", Bad: 5, Total: 15})
			url, _, _ := serve(b, topoStatic{newStatic(m), topo}, "synthetic", "rdmamesh fabric "+c.name, false)
			ctx := browser(b)
			b.Cleanup(func() { leave(b, ctx) })
			var ms float64
			for i := 0; i < b.N; i++ {
				do(b, ctx, "open the UI", chromedp.Navigate(url+"/#fabric"))
				ms = poll[float64](b, ctx, "the marked fabric", `(() => { const f = window.rdmamesh.fabric; return f.drawn && f.marked >= 3 && f.drawMs; })()`)
			}
			b.ReportMetric(ms, "draw-ms")
			screenshot(b, ctx, "32-fabric-"+c.name)
		})
	}
}
