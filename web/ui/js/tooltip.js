// The hover tooltip. It shows what the layer byte says at once and fills
// in the exact figures from the pair endpoint when they arrive.

import { STATUS, FIRST_BUCKET, V_FAILED, V_UNTESTED, bucketValue } from "./palette.js";
import { $, el, kv, fmtUs, fmtGbps, fmtValue } from "./util.js";

const tip = $("tooltip");

export function hideTooltip() {
  tip.hidden = true;
}

export function place(ev) {
  if (tip.hidden || !ev) return;
  const pad = 14;
  const w = tip.offsetWidth;
  const h = tip.offsetHeight;
  let x = ev.clientX + pad;
  let y = ev.clientY + pad;
  if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - pad - w);
  if (y + h > window.innerHeight - 4) y = Math.max(4, window.innerHeight - 4 - h);
  tip.style.left = `${x}px`;
  tip.style.top = `${y}px`;
}

function show(children, ev) {
  tip.replaceChildren(...children);
  tip.hidden = false;
  place(ev);
}

// codeText says what one layer byte means.
export function codeText(header, code) {
  if (header.metric === "status") return (STATUS[code] && STATUS[code].key) || "no cell";
  if (code === V_FAILED) return "failed";
  if (code === V_UNTESTED) return "untested";
  if (code >= FIRST_BUCKET) return `≈ ${fmtValue(bucketValue(header.scale, code), header.unit)}`;
  return "no cell";
}

function cellBlock(c, brief) {
  const b = el("div", "tt-rail");
  const title = el("div");
  const dev = c.src_device || c.dst_device ? ` ${c.src_device || "?"} → ${c.dst_device || "?"}` : "";
  title.append(el("span", "k", `rail ${c.rail}${dev} `), el("span", `verdict v-${c.verdict}`, c.verdict));
  if (c.class && c.class !== "ok") title.append(` (${c.class})`);
  b.append(title);
  if (c.latency || c.bandwidth) {
    b.append(el("div", "", `p50 ${fmtUs(c.latency && c.latency.p50_ns)} · p99 ${fmtUs(c.latency && c.latency.p99_ns)} · ${fmtGbps(c.bandwidth && c.bandwidth.gbps)}`));
  }
  if (brief && c.verdict === "ok") return b;
  // A failure's reason usually repeats its cause; say it once.
  if (c.reason && !(c.error && c.reason.includes(c.error.cause))) kv(b, "reason", c.reason);
  if (c.error) {
    const e = c.error;
    const where = [e.verb, e.errno ? `errno ${e.errno}` : "", e.wc_status ? `wc status ${e.wc_status}` : ""].filter(Boolean).join(", ");
    kv(b, "cause", where ? `${e.cause} [${where}]` : e.cause);
    if (e.fix) kv(b, "fix", e.fix, "fix");
  }
  if (c.retests && c.retests.length) kv(b, "retests", `${c.retests.length} (see the drill-down)`);
  return b;
}

// showPair renders a pair; detail is the pair answer or null while loading,
// hint what a click does.
export function showPair(ev, { src, dst, rail, header, code, detail, hint = "click for the drill-down" }) {
  const head = el("div", "tt-head", `${src} → ${dst}`);
  const parts = [head];
  const what = el("div");
  what.append(el("span", "k", `${rail === "all" ? "all rails (worst)" : `rail ${rail}`}: `), codeText(header, code));
  parts.push(what);
  if (detail) {
    const cells = detail.forward.filter((c) => rail === "all" || c.rail === Number(rail));
    const blocks = cells.map((c) => cellBlock(c, rail === "all"));
    parts.push(...blocks);
    if (!cells.length) parts.push(el("div", "sub", "no cell on this rail"));
  } else {
    parts.push(el("div", "sub", "loading figures…"));
  }
  parts.push(el("div", "sub", hint));
  show(parts, ev);
}

export function showText(ev, title, lines) {
  show([el("div", "tt-head", title), ...lines.map((l) => el("div", "", l))], ev);
}
