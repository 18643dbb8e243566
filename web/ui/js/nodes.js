// The nodes view: gossip state, role, HCAs, chosen GIDs and failing doctor
// checks of every member, with a filter; thousands of rows are rendered in
// pages so the tab stays responsive at 1,024 nodes x 8 HCAs.

import { $, el } from "./util.js";

const PAGE = 300;
let nodes = [];
let key = "";
let limit = PAGE;

function checkItem(c, prefix) {
  const d = el("span", "check");
  d.append(el("span", c.status === "fail" ? "port-bad" : "", `${prefix}${c.name} ${c.status}`));
  const text = [c.cause || c.evidence, c.fix ? `Fix: ${c.fix}` : ""].filter(Boolean).join(" · ");
  if (text) d.append(el("span", "sub", ` ${text}`));
  if (c.evidence) d.title = c.evidence;
  return d;
}

function hasProblem(n) {
  const inv = n.inventory;
  if (n.state !== "alive") return true;
  if (!inv) return n.role === "worker";
  if ((inv.checks || []).some((c) => c.status !== "ok")) return true;
  return (inv.ports || []).some((p) => !p.usable || p.state !== "ACTIVE" || (p.failed_checks || []).length);
}

function matches(n, q) {
  if (!q) return true;
  const inv = n.inventory || {};
  const hay = [n.name, n.role, n.state, n.api_addr, ...Object.entries(inv.labels || {}).map(([k, v]) => `${k}=${v}`),
    ...(inv.ports || []).flatMap((p) => [p.device, p.gid, p.gid_type, p.netdev, p.ip, p.state, ...(p.failed_checks || []).map((c) => c.name)]),
    ...(inv.checks || []).map((c) => `${c.name} ${c.status}`)];
  return hay.some((s) => s && String(s).toLowerCase().includes(q));
}

function rowsFor(n) {
  const inv = n.inventory || {};
  const ports = inv.ports && inv.ports.length ? inv.ports : [null];
  const hostChecks = (inv.checks || []).filter((c) => c.status !== "ok");
  return ports.map((p, k) => {
    const tr = el("tr", k === 0 ? "node-first" : "");
    const td = (text, cls) => {
      const c = el("td", cls || "", text);
      tr.append(c);
      return c;
    };
    if (k === 0) {
      td(n.name, "mono");
      td(n.role);
      td(n.state, `state-${n.state}`);
      td(n.api_addr, "mono");
    } else {
      for (let x = 0; x < 4; x++) td("");
    }
    if (!p) {
      td(n.inventory ? "no HCA ports" : n.role === "worker" ? "no inventory yet" : "–", "sub");
      for (let x = 0; x < 7; x++) td("");
    } else {
      td(`${p.device}:${p.port}`, "mono");
      td(p.rail, "num");
      td(p.link_layer);
      const st = td(p.state, p.state === "ACTIVE" && p.usable ? "" : "port-bad");
      if (!p.usable && p.unusable_why) st.append(el("div", "sub", `unusable: ${p.unusable_why}`));
      td(p.rate_gbps ? `${p.rate_gbps} Gb/s` : "–", "num");
      td(p.mtu || "–", "num");
      const gid = td(`${p.gid_index}${p.gid_type ? ` (${p.gid_type})` : ""}`);
      if (p.gid) gid.append(el("div", "mono sub", p.gid));
      if (p.gid_reason) gid.append(el("div", "sub", p.gid_reason));
      td([p.netdev, p.ip].filter(Boolean).join(" / ") || "–", "mono");
    }
    const checks = td("");
    for (const c of (p && p.failed_checks) || []) checks.append(checkItem(c, ""));
    if (k === 0) for (const c of hostChecks) checks.append(checkItem(c, "host: "));
    return tr;
  });
}

export function renderNodes(list, force) {
  const k = JSON.stringify(list);
  if (k === key && !force) return; // keep text selectable between polls
  key = k;
  nodes = [...list].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }));
  const q = $("node-filter").value.trim().toLowerCase();
  const problems = $("node-problems").checked;
  const shown = nodes.filter((n) => (!problems || hasProblem(n)) && matches(n, q));
  const rows = shown.slice(0, limit).flatMap(rowsFor);
  if (!rows.length) {
    const tr = el("tr");
    const c = el("td", "sub", nodes.length ? "No member matches." : "No members known yet.");
    c.colSpan = 13;
    tr.append(c);
    rows.push(tr);
  }
  $("nodes").tBodies[0].replaceChildren(...rows);
  const workers = nodes.filter((n) => n.role === "worker");
  const alive = workers.filter((n) => n.state === "alive").length;
  $("node-count").textContent = `${shown.length} of ${nodes.length} members shown · ${alive}/${workers.length} workers alive · ${nodes.filter(hasProblem).length} with problems`;
  $("node-more").hidden = shown.length <= limit;
}

export function bindNodes() {
  const again = () => {
    limit = PAGE;
    renderNodes(nodes, true);
  };
  $("node-filter").addEventListener("input", again);
  $("node-problems").addEventListener("change", again);
  $("node-more").addEventListener("click", () => {
    limit = Infinity;
    renderNodes(nodes, true);
  });
}
