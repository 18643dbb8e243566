// Pointing at the heatmap: the hover tooltip, whose figures come from the
// pair endpoint (cached per grid), and the pair drill-down dialog.

import { getJSON, sweepPath } from "./api.js";
import { renderDrill } from "./drill.js";
import { showPair, showText, hideTooltip, codeText } from "./tooltip.js";
import { $, el, fmtShare } from "./util.js";

// pointer works on the page's state; hm returns the heatmap (made after
// its callbacks, which are these).
export function pointer(state, hm) {
  const name = (i) => state.grid.nodes[i].name;

  async function pairDetail(src, dst) {
    const key = `${src}\n${dst}`;
    if (!state.pairs.has(key)) {
      const grid = state.grid;
      const p = getJSON(sweepPath(grid.sweep, `/pair?src=${encodeURIComponent(src)}&dst=${encodeURIComponent(dst)}`));
      state.pairs.set(key, p);
      p.catch(() => state.pairs.delete(key));
    }
    return state.pairs.get(key);
  }

  let hoverTimer = 0;
  function onHover(t, ev) {
    state.hover = t;
    state.hoverEv = ev;
    clearTimeout(hoverTimer);
    if (!t || !state.layer) {
      hideTooltip();
      return;
    }
    const g = state.grid;
    if (t.kind === "block") {
      const a = g.groups[t.a];
      const b = g.groups[t.b];
      const s = hm().blockStats();
      const k = t.a * s.G + t.b;
      showText(ev, `${a.name || "(no group)"} → ${b.name || "(no group)"}`, [
        `${a.count} × ${b.count} nodes, ${s.tested[k]} pair(s) tested, ${s.bad[k]} bad (${fmtShare(s.tested[k] ? s.bad[k] / s.tested[k] : 0)})`,
        `worst: ${codeText(state.layer.header, s.worst[k])}`,
        "click to zoom into these two groups",
      ]);
      return;
    }
    if (t.kind === "hca") {
      const n = g.nodes[t.i];
      showText(ev, `${n.name} rail ${t.rail}`, [
        `${n.bad[t.rail]} of ${n.tested[t.rail]} tested cells bad, ${fmtShare(n.tested[t.rail] ? n.bad[t.rail] / n.tested[t.rail] : 0)} (${n.total[t.rail]} cells as initiator or target)`,
        `group ${n.group || "–"}, ${n.state || "?"}`,
        "click to show this HCA's row and column",
      ]);
      return;
    }
    const src = name(t.i);
    const dst = name(t.j);
    const layer = t.rail >= 0 ? hm().rails[t.rail] : state.layer;
    if (!layer) return;
    const code = layer.body[t.i * g.nodes.length + t.j];
    const rail = t.rail >= 0 ? String(t.rail) : state.rail;
    const show = (detail) => {
      if (state.hover !== t) return;
      const hint = t.rail >= 0 ? `click to open rail ${t.rail} zoomed here` : undefined;
      showPair(state.hoverEv, { src, dst, rail, header: layer.header, code, detail, hint });
    };
    const key = `${src}\n${dst}`;
    const cached = state.pairs.get(key);
    show(null);
    if (cached) cached.then(show, () => {});
    else hoverTimer = setTimeout(() => pairDetail(src, dst).then(show, () => {}), 80);
  }

  async function openDrill(src, dst) {
    hideTooltip();
    const dlg = $("drill");
    $("drill-title").textContent = `${src} ⇄ ${dst}`;
    $("drill-body").replaceChildren(el("p", "sub", "loading…"));
    if (!dlg.open) dlg.showModal();
    try {
      renderDrill(await pairDetail(src, dst), state.rail);
    } catch (e) {
      $("drill-body").replaceChildren(el("p", "port-bad", `Could not load the pair: ${e.message}`));
    }
  }

  return { onHover, openDrill };
}
