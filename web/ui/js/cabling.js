// The Cabling view: every finding of GET /api/v1/cabling (verdict, port,
// what the plan expects, what was found, what to do), worst first, with
// the traced paths of the selected sweep as evidence beside the workers'
// LLDP neighbours. Ports without evidence are listed after the mismatches
// and fail nothing; ok ports are counted, not listed.

import { getJSON, download } from "./api.js";
import { $, el } from "./util.js";

const COLS = 7;

// VERDICTS in the report's order, worst first (cabling.Verdicts).
const VERDICTS = ["swapped", "wrong-rail", "wrong-leaf", "wrong-switch", "wrong-port", "missing", "unknown-switch", "unexpected",
  "name-pattern", "no-evidence", "ok"];

export function cablingView() {
  const st = { status: "unknown", sweep: null, report: null, key: "" };
  let seq = 0;

  // load fetches the report with sweep's paths ("" or the live mesh: the
  // newest sweep's) and renders it; a poll with nothing new keeps the
  // table as it is, so its text stays selectable.
  async function load(sweep) {
    const mine = ++seq;
    const q = sweep ? `?sweep=${encodeURIComponent(sweep)}` : "";
    try {
      const rep = await getJSON(`api/v1/cabling${q}`);
      if (mine !== seq) return;
      st.status = "ready";
      st.sweep = sweep;
      const key = JSON.stringify(rep);
      if (key === st.key) return;
      st.key = key;
      st.report = rep;
      render(rep);
    } catch (e) {
      if (mine !== seq) return;
      st.status = "error";
      st.key = "";
      $("cabling-summary").textContent = `Cabling could not be judged: ${e.message}`;
      $("cabling").tBodies[0].replaceChildren();
    }
  }

  function render(rep) {
    const counts = rep.counts || {};
    const ports = rep.ports || [];
    const parts = VERDICTS.filter((v) => counts[v] > 0).map((v) => `${counts[v]} ${v}`);
    const what = rep.planned ? "against the plan" : "without a plan (a survey of what is seen)";
    $("cabling-summary").textContent = `Cabling ${what}: ${ports.length} ports · ${parts.join(" · ") || "nothing seen"}`;
    const s = rep.source || {};
    const from = [`${s.workers || 0} workers`, `${s.neighbors || 0} ports with an LLDP neighbour`];
    if (s.sweep) from.push(`${s.paths || 0} paths traced by sweep ${s.sweep}`);
    $("cabling-source").textContent = `Evidence: ${from.join(", ")}. Switches' own tables: ${s.switch_tables || "not read"}.`;
    const findings = ports.filter((f) => f.verdict !== "ok");
    const rows = findings.map(row);
    if (!rows.length) {
      const tr = el("tr");
      const c = el("td", "sub", ports.length ? "Every port is cabled as planned." : "No port reported yet.");
      c.colSpan = COLS;
      tr.append(c);
      rows.push(tr);
    }
    $("cabling").tBodies[0].replaceChildren(...rows);
    const adds = rep.plan_would_add || [];
    $("cabling-plan").hidden = !adds.length;
    $("cabling-plan-list").replaceChildren(...adds.map((a) => el("li", "", a)));
  }

  function row(f) {
    const tr = el("tr", `verdict-${f.verdict}`);
    tr.dataset.verdict = f.verdict;
    tr.append(el("td", f.verdict === "no-evidence" ? "sub" : "port-bad", f.verdict));
    tr.append(el("td", "mono", f.end));
    tr.append(el("td", "mono", f.expected || "–"));
    const found = el("td", "mono", f.found || "–");
    if (f.with) found.append(el("div", "sub", `with ${f.with}`));
    tr.append(found);
    tr.append(el("td", "", f.evidence || "–"));
    tr.append(el("td", "", f.action || "–"));
    tr.append(el("td", "sub", f.detail || ""));
    return tr;
  }

  $("cabling-csv").addEventListener("click", () => {
    const q = st.sweep ? `&sweep=${encodeURIComponent(st.sweep)}` : "";
    download(`api/v1/cabling?format=csv${q}`, "rdmamesh-cabling.csv").catch((e) => {
      $("cabling-summary").textContent = `CSV download failed: ${e.message}`;
    });
  });

  return {
    load,
    info: () => ({ status: st.status, findings: st.report ? (st.report.ports || []).filter((f) => f.verdict !== "ok").length : 0 }),
  };
}
