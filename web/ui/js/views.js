// Which view the heatmap shows and why: the view the sweep's evidence
// picks (the grid's overview), the view that shows a suspect, and the one
// line that says why the page shows what it shows.

// ZOOM_SPAN is how many nodes a suspect's zoom shows across: enough to see
// its row and column cross their neighbours, few enough for names (9 px).
export const ZOOM_SPAN = 48;

// A plan is what to show: {mode, rail ("all" | "0".."R-1"), focus
// ({r0, r1, c0, c1} | null), zoom ([r0, r1, c0, c1] | null), focusRail}.

// overviewPlan is the view the sweep's evidence picks.
export function overviewPlan(grid) {
  const ov = grid.overview || { view: "pairs" };
  return { mode: ov.view === "rails" ? "rails" : "pairs", rail: "all", focus: null, zoom: null, focusRail: -1 };
}

// around is the zoom window of ZOOM_SPAN nodes centred on rows r0..r1 and
// columns c0..c1, or null when the fit shows that much already.
function around(n, r0, r1, c0, c1) {
  if (n <= ZOOM_SPAN) return null;
  const span = Math.max(ZOOM_SPAN, r1 - r0 + 8, c1 - c0 + 8);
  const mid = (a, b) => (a + b) / 2;
  return [mid(r0, r1) - span / 2, mid(r0, r1) + span / 2, mid(c0, c1) - span / 2, mid(c0, c1) + span / 2];
}

// nodePlan zooms to node position i on rail (or all rails) and highlights
// its row and column: where a dead HCA or a slow node shows.
export function nodePlan(grid, i, rail) {
  const focus = { r0: i, r1: i + 1, c0: i, c1: i + 1 };
  return { mode: "pairs", rail, focus, zoom: around(grid.nodes.length, i, i + 1, i, i + 1), focusRail: -1 };
}

// suspectPlan shows what a suspect blames: a node or HCA as its row and
// column, a pair as the row of one and the column of the other, a switch
// group as its band of rows and columns, a rail among the others.
export function suspectPlan(grid, s) {
  const pos = (name) => grid.nodes.findIndex((x) => x.name === name);
  const rail = s.rail >= 0 ? String(s.rail) : "all";
  const n = grid.nodes.length;
  if (s.kind === "rail") return { mode: "rails", rail: "all", focus: null, zoom: null, focusRail: s.rail };
  if (s.kind === "switch-group") {
    const value = (s.group || "").split("=").slice(1).join("=");
    const g = grid.groups.find((x) => x.name === value);
    if (!g) return { mode: "groups", rail, focus: null, zoom: null, focusRail: -1 };
    const [a, b] = [g.start, g.start + g.count];
    return { mode: "pairs", rail, focus: { r0: a, r1: b, c0: a, c1: b }, zoom: around(n, a, b, a, b), focusRail: -1 };
  }
  if (s.kind === "pair") {
    const i = pos(s.node);
    const j = pos(s.peer);
    if (i >= 0 && j >= 0) {
      return { mode: "pairs", rail, focus: { r0: i, r1: i + 1, c0: j, c1: j + 1 }, zoom: around(n, i, i + 1, j, j + 1), focusRail: -1 };
    }
  }
  const i = pos(s.node);
  if (i < 0) return { mode: "pairs", rail, focus: null, zoom: null, focusRail: -1 };
  return nodePlan(grid, i, rail);
}

// whyText is the line above the heatmap: why this view, when the page
// picked it or when the evidence says another view reads better.
export function whyText(grid, mode, rail, auto) {
  const ov = grid && grid.overview;
  if (!ov || !ov.why) return "";
  if (mode === "rails" && ov.view === "rails") return `Each rail apart: ${ov.why}.`;
  if (mode === "pairs" && rail === "all" && ov.view === "rails") {
    return `The worst of all rails is mostly bad: ${ov.why}. “each rail” shows them apart.`;
  }
  if (auto && mode === "pairs" && rail === "all") return `All rails, the worst rail of each pair: ${ov.why}.`;
  return "";
}

// HINTS say, under the heatmap, how to read and work each view.
export const HINTS = {
  rails: "One small heatmap per rail, row = initiator, column = target. Hover for a pair, click to open that rail zoomed there.",
  pairs: "Row = initiator (src), column = target (dst). Hover a cell for its figures, click it for the drill-down. " +
    "Wheel zooms, drag pans, “fit” shows everything; Esc clears the highlight.",
  groups: "Row = initiator group, column = target group. Hover a block for its counts, click it to see its node pairs.",
  hcas: "One row per node, one column per rail: each HCA's share of bad cells. Click an HCA to show its row and column.",
};
