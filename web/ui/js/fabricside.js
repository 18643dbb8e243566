// What the Fabric view says in words: the tooltip of a switch, cable or
// leaf's host cables, the selected one's details with its suspects' reason
// and fix (the heatmap's suspect items), and the list of the sweep's link,
// cable and switch suspects.

import { suspectItem } from "./panels.js";
import { $, el, suspectTarget } from "./util.js";
import { endName, tierName } from "./fabricdraw.js";

export const planeName = (p) => (p < 0 ? "whole fabric" : `rail ${p}`);

function switchLine(t, i) {
  const s = t.switches[i];
  return `${tierName(s.tier)}, ${s.plane >= 0 ? `rail ${s.plane}` : "all rails"}${s.tier < 3 && s.pod ? `, pod ${s.pod}` : ""}`;
}

// describe says what element t ({kind: cable | switch | hosts, i}) is,
// what went through it (loads: js/fabricload.js's lines), and why it is a
// suspect when found (the suspects it stands for) is not empty. The first
// head lines are about the element itself, the rest about its suspects.
export function describe(ix, t, found, loads) {
  const { t: topo } = ix;
  let title = "";
  const lines = [];
  if (t.kind === "cable") {
    const c = topo.cables[t.i];
    title = `${endName(topo, c.a)} ⇄ ${endName(topo, c.b)}`;
    const side = (e) => (e.switch >= 0 ? `${tierName(topo.switches[e.switch].tier)} ${topo.switches[e.switch].name}` : endName(topo, e));
    lines.push(`cable between ${side(c.a)} and ${side(c.b)}${c.speed ? ` (${c.speed})` : ""}`);
  } else {
    const s = topo.switches[t.i];
    title = t.kind === "hosts" ? `${s.name}: host cables` : s.name;
    lines.push(switchLine(topo, t.i));
    if (ix.hosts[t.i]) lines.push(`${ix.hosts[t.i]} HCAs cabled to it${t.kind === "hosts" ? " (not drawn one by one)" : ""}`);
  }
  lines.push(...loads);
  const head = lines.length;
  for (const f of found) {
    lines.push(`${suspectTarget(f.s)}: ${f.s.verdict || "suspect"}, ${f.s.bad}/${f.s.total} tests bad`);
    if (f.s.direction === "one-way") lines.push(`only ${f.s.ends[0]} → ${f.s.ends[1]} is hurt`);
    lines.push(f.s.reason);
  }
  if (!found.length) lines.push("not a suspect of the selected sweep");
  return { title, lines, head };
}

// renderDetail fills the side panel with the selected element.
export function renderDetail(ix, sel, found, loads) {
  const box = $("fabric-detail");
  if (!sel) {
    box.replaceChildren(el("p", "sub", "Click a switch, a cable or a leaf's host bar; a suspect shows its reason and fix here."));
    return;
  }
  const { title, lines, head } = describe(ix, sel, found, loads);
  const parts = [el("div", "tt-head", title), ...lines.slice(0, head).map((l) => el("div", "sub", l))];
  if (found.length) {
    const ol = el("ol", "suspect-list");
    ol.append(...found.map((f) => suspectItem(f.s)));
    parts.push(ol);
  } else {
    parts.push(el("p", "sub", "No suspect of the selected sweep names it."));
  }
  box.replaceChildren(...parts);
}

// renderFabricSuspects lists the grid's link, cable and switch suspects;
// clicking one shows it on its plane.
export function renderFabricSuspects(grid, found, onPick) {
  const ol = $("fabric-suspects");
  if (!grid) {
    ol.replaceChildren(el("li", "", "No matrix yet."));
    return;
  }
  const items = found.map((f) => {
    const li = suspectItem(f.s);
    li.prepend(el("span", `sev ${f.cls}`, planeName(f.plane)), " ");
    li.title = "show it on the fabric";
    li.addEventListener("click", () => onPick(f));
    return li;
  });
  if (!items.length) items.push(el("li", "", "No link, cable or switch suspects."));
  const others = grid.suspects.length - found.length;
  if (others) items.push(el("li", "sub", `${others} other suspect${others > 1 ? "s" : ""} (nodes, HCAs, rails, groups): see the Heatmap.`));
  ol.replaceChildren(...items);
}
