// The sweeps view: history, the start form, downloads and the diff of two
// sweeps.

import { request, readJSON, getJSON, download, sweepPath } from "./api.js";
import { $, el, fmtTime, fmtDuration, fmtUs, fmtGbps, suspectTarget } from "./util.js";
import { LIVE_ID } from "./live.js";

let pickA = "";
let pickB = "";
let cb = null;
let lastKey = "";

function verdictText(s) {
  if (s.state === "running") return "running";
  if (s.state === "failed") return `failed: ${s.error || "?"}`;
  if (s.healthy === undefined || s.healthy === null) return "–";
  return s.healthy ? "HEALTHY" : "UNHEALTHY";
}

export function renderHistory(sweeps, current) {
  const k = JSON.stringify([sweeps, current, pickA, pickB]);
  if (k === lastKey) return;
  lastKey = k;
  const rows = sweeps.map((s) => {
    const tr = el("tr", s.id === current ? "selected" : "");
    const radio = (name, picked, set) => {
      const td = el("td");
      const r = el("input");
      r.type = "radio";
      r.name = name;
      r.checked = picked === s.id;
      r.setAttribute("aria-label", `${name === "diff-a" ? "A" : "B"}: ${s.id}`);
      r.addEventListener("change", () => {
        set(s.id);
        $("diff-run").disabled = !(pickA && pickB && pickA !== pickB);
      });
      td.append(r);
      return td;
    };
    tr.append(radio("diff-a", pickA, (v) => (pickA = v)), radio("diff-b", pickB, (v) => (pickB = v)));
    const idTd = el("td", "mono");
    const a = el("a", "", s.id);
    a.href = "#heatmap";
    a.addEventListener("click", () => cb.onSelect(s.id));
    idTd.append(a);
    tr.append(idTd);
    const finished = s.finished ? new Date(s.finished) : s.state === "running" ? new Date() : null;
    for (const [t, cls] of [
      [s.state, s.state === "failed" ? "port-bad" : ""],
      [s.mode, ""],
      [(s.nodes || []).length, "num"],
      [s.rails, "num"],
      [`${s.rounds_done}/${s.rounds}${s.retest_pass ? ` · retest ${s.retest_pass}` : ""}`, "num"],
      [`${s.cells_done}/${s.cells}`, "num"],
      [fmtTime(s.started), ""],
      [finished ? fmtDuration(finished - new Date(s.started)) : "–", "num"],
      [verdictText(s), s.healthy === false || s.state === "failed" ? "port-bad" : ""],
    ]) {
      tr.append(el("td", cls, t));
    }
    const dl = el("td");
    for (const [fmt, ext] of [["json", "json"], ["csv", "csv"], ["junit", "xml"]]) {
      const b = el("button", "dl", fmt === "junit" ? "JUnit" : fmt.toUpperCase());
      b.type = "button";
      b.title = `download the matrix as ${fmt}`;
      b.addEventListener("click", () =>
        download(sweepPath(s.id, `/matrix?format=${fmt}`), `rdmamesh-${s.id}.${ext}`).catch((e) => cb.onError(`Download failed: ${e.message}`)),
      );
      dl.append(b);
    }
    tr.append(dl);
    return tr;
  });
  if (!rows.length) {
    const tr = el("tr");
    const c = el("td", "sub", "No sweeps yet: start one with the form.");
    c.colSpan = 13;
    tr.append(c);
    rows.push(tr);
  }
  $("history").tBodies[0].replaceChildren(...rows);
}

// formRequest turns the form into a SweepRequest, leaving out everything
// the operator left empty so the coordinator's defaults apply.
function formRequest() {
  const req = {};
  const val = (id) => $(id).value.trim();
  if (val("f-mode")) req.mode = val("f-mode");
  if (val("f-hosts")) req.hosts = val("f-hosts");
  if (val("f-pattern")) req.pattern = val("f-pattern");
  if (req.pattern === "k-batch" && val("f-batch")) req.batch_size = Number(val("f-batch"));
  if (req.pattern === "one-to-all" && val("f-root")) req.root = val("f-root");
  if (val("f-rail-mode")) req.rail_mode = val("f-rail-mode");
  if (val("f-budget")) req.budget = val("f-budget");
  return req;
}

const FIELD_INPUT = { mode: "f-mode", hosts: "f-hosts", nodes: "f-hosts", labels: "f-hosts", pattern: "f-pattern",
  batch_size: "f-batch", root: "f-root", rail_mode: "f-rail-mode", rails: "f-rail-mode", budget: "f-budget" };

async function submit(ev) {
  ev.preventDefault();
  const btn = $("start");
  const out = $("start-result");
  btn.disabled = true;
  for (const e of document.querySelectorAll("#start-form .invalid")) e.classList.remove("invalid");
  out.textContent = "starting…";
  try {
    const res = await request("api/v1/sweeps", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(formRequest()),
    });
    const info = await readJSON(res);
    out.textContent = `Started ${info.id}: ${(info.nodes || []).length} nodes, ${info.rounds} rounds.`;
    cb.onStarted(info);
  } catch (e) {
    const input = FIELD_INPUT[e.field] && $(FIELD_INPUT[e.field]);
    if (input) input.classList.add("invalid");
    out.textContent = `Could not start a sweep: ${e.message}${e.field ? ` (field: ${e.field})` : ""}`;
  } finally {
    btn.disabled = false;
  }
}

function diffTable(head, rows) {
  const t = el("table");
  const tr = el("tr");
  for (const h of head) tr.append(el("th", "", h));
  t.append(el("thead"), el("tbody"));
  t.tHead.append(tr);
  t.tBodies[0].append(...rows);
  return t;
}

async function runDiff() {
  const box = $("diff");
  box.replaceChildren(el("p", "sub", "comparing…"));
  try {
    const d = await getJSON(`api/v1/diff?old=${encodeURIComponent(pickA)}&new=${encodeURIComponent(pickB)}&limit=200`);
    const r = d.report;
    const out = [];
    const side = (s) => `${s.nodes} nodes, ${s.rails} rails, ${s.cells} cells, ${s.healthy ? "healthy" : "unhealthy"}`;
    out.push(el("p", "", `A ${d.old}: ${side(r.old)}`), el("p", "", `B ${d.new}: ${side(r.new)}`));
    const sum = el("p");
    sum.append(el("span", "diff-worse", `${d.worse_total} cell(s) worse`), " · ", el("span", "diff-better", `${d.better_total} better`));
    if (r.added_nodes && r.added_nodes.length) sum.append(` · nodes added: ${r.added_nodes.join(", ")}`);
    if (r.removed_nodes && r.removed_nodes.length) sum.append(` · nodes removed: ${r.removed_nodes.join(", ")}`);
    out.push(sum);
    for (const [title, list, cls] of [["New suspects", r.new_suspects, "diff-worse"], ["Cleared suspects", r.cleared_suspects, "diff-better"]]) {
      if (!list.length) continue;
      out.push(el("h3", "", title));
      const ul = el("ul");
      for (const s of list) {
        const li = el("li");
        li.append(el("span", cls, suspectTarget(s)), ` ${s.reason}`);
        ul.append(li);
      }
      out.push(ul);
    }
    if (r.rails.length) {
      out.push(el("h3", "", "Rails"));
      out.push(diffTable(["rail", "bad cells A → B", "median p50 A → B", "min Gb/s A → B"], r.rails.map((x) => {
        const tr = el("tr");
        for (const t of [x.rail, `${x.old_bad} → ${x.new_bad}`, `${fmtUs(x.old_p50_ns)} → ${fmtUs(x.new_p50_ns)}`,
          `${fmtGbps(x.old_min_gbps)} → ${fmtGbps(x.new_min_gbps)}`]) tr.append(el("td", "", t));
        if (x.new_bad > x.old_bad) tr.className = "diff-worse";
        return tr;
      })));
    }
    for (const [title, list, total] of [["Worse cells", r.worse, d.worse_total], ["Better cells", r.better, d.better_total]]) {
      if (!list.length) continue;
      out.push(el("h3", "", `${title}${total > list.length ? ` (first ${list.length} of ${total})` : ""}`));
      out.push(diffTable(["rail", "src → dst", "A", "B", "p50 A → B", "Gb/s A → B", "reason"], list.map((c) => {
        const tr = el("tr");
        for (const t of [c.rail, `${c.src} → ${c.dst}`, c.old, c.new, `${fmtUs(c.old_p50_ns)} → ${fmtUs(c.new_p50_ns)}`,
          `${fmtGbps(c.old_gbps)} → ${fmtGbps(c.new_gbps)}`, c.reason || ""]) tr.append(el("td", "", t));
        return tr;
      })));
    }
    box.replaceChildren(...out);
  } catch (e) {
    box.replaceChildren(el("p", "port-bad", `Could not compare: ${e.message}`));
  }
}

export function bindSweeps(callbacks) {
  cb = callbacks;
  $("start-form").addEventListener("submit", submit);
  $("diff-run").addEventListener("click", runDiff);
  const pattern = () => {
    $("f-batch-label").hidden = $("f-pattern").value !== "k-batch";
    $("f-root-label").hidden = $("f-pattern").value !== "one-to-all";
  };
  $("f-pattern").addEventListener("change", pattern);
  pattern();
}

// showProgress shows sweep progress p in the header (null: hide it).
export function showProgress(p) {
  const box = $("progress");
  if (!p) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const bar = $("progress-bar");
  bar.max = Math.max(1, p.cells);
  bar.value = p.cells_done;
  const pct = p.cells ? Math.floor((100 * p.cells_done) / p.cells) : 0;
  const retest = p.retest_pass ? ` · retest pass ${p.retest_pass} (${p.retested} pairs)` : "";
  const head = p.state === "running" ? "running" : p.state;
  $("progress-text").textContent = `${head}: round ${p.rounds_done} of ${p.rounds} · cells ${p.cells_done}/${p.cells} (${pct}%)${retest}`;
}

// renderSweepSelect lists the sweeps in the header, current selected, and
// above them the live mesh when live is true.
export function renderSweepSelect(sweeps, current, live) {
  const sel = $("sweep");
  const opts = sweeps.map((s) => {
    const o = el("option", "", `${s.id} · ${s.state} · ${s.mode} · ${(s.nodes || []).length} nodes`);
    o.value = s.id;
    return o;
  });
  if (live) {
    const o = el("option", "", "Live · always-on mesh");
    o.value = LIVE_ID;
    opts.unshift(o);
  }
  if (!opts.length) {
    const o = el("option", "", "no sweeps yet");
    o.value = "";
    opts.push(o);
  }
  const key = opts.map((o) => o.value + o.textContent).join("|");
  if (sel.dataset.key !== key) {
    sel.replaceChildren(...opts);
    sel.dataset.key = key;
  }
  sel.value = current;
}
