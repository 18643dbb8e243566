// DOM and number helpers. Everything from the API (node names, reasons,
// fixes) reaches the DOM through textContent, never innerHTML: those strings
// come from remote workers.

export const $ = (id) => document.getElementById(id);

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

export function kv(parent, key, value, cls) {
  const line = el("div", cls || "");
  line.append(el("span", "k", `${key}: `), String(value));
  parent.append(line);
  return line;
}

export const fmtNum = (v) =>
  Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
export const fmtUs = (ns) => (typeof ns === "number" && ns > 0 ? `${fmtNum(ns / 1000)} µs` : "–");
export const fmtGbps = (g) => (typeof g === "number" && g > 0 ? `${fmtNum(g)} Gb/s` : "–");

// fmtValue formats a layer figure in its unit for people.
export function fmtValue(v, unit) {
  if (unit === "ns") return fmtUs(v);
  if (unit === "Gb/s") return fmtGbps(v);
  if (unit === "%") return `${fmtNum(v)}%`;
  return fmtNum(v);
}

// fmtShare formats a share of bad cells, the one convention of every
// rollup: 0% is clean, and a bad share never rounds to 0% or 100%.
export function fmtShare(x) {
  if (!(x > 0)) return "0%";
  if (x < 0.01) return "<1%";
  if (x < 0.995) return `${Math.round(100 * x)}%`;
  return x < 1 ? ">99%" : "100%";
}

export function fmtDuration(ms) {
  if (!(ms >= 0)) return "–";
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} m ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} m`;
}

export const fmtTime = (iso) => {
  const d = new Date(iso);
  return isNaN(d) ? "–" : d.toLocaleString();
};

export function railName(r) {
  return r === "all" || r < 0 ? "all rails" : `rail ${r}`;
}

// suspectTarget names what a suspect blames, e.g. "node-03/mlx5_1 (rail 1)"
// or "link leaf-r0-01:6 ⇄ spine-r0-00:4".
export function suspectTarget(s) {
  switch (s.kind) {
    case "hca":
      return `${s.node}/${s.device || "?"} (rail ${s.rail})`;
    case "node":
      return `node ${s.node}`;
    case "rail":
      return `rail ${s.rail}`;
    case "pair":
      return `${s.node} ⇄ ${s.peer} (rail ${s.rail})`;
    case "link":
      return `link ${(s.ends || []).join(s.direction === "one-way" ? " → " : " ⇄ ")}`;
    case "cable":
      return `cable ${(s.ends && s.ends.length ? s.ends : [`${s.node}/${s.device || "?"}`]).join(" ⇄ ")}`;
    case "switch":
      return `switch ${s.switch}`;
    case "switch-group":
      return `switch group ${s.group}${s.rail >= 0 ? ` (rail ${s.rail})` : ""}`;
    default:
      return `${s.kind} ${s.node || ""}`;
  }
}
