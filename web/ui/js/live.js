// The Live view: the always-on mesh's rolling matrix, shown like a sweep
// under the pseudo id "live" (the same heatmap, drill-down and suspects),
// with a header line saying how fresh it is, refreshed on every new window
// the coordinator announces over Server-Sent Events.

import { request, readJSON, streamEvents } from "./api.js";
import { $ } from "./util.js";

export const LIVE_ID = "live";

// A live view whose newest window ended more than this many windows ago is
// marked stale: the workers stopped reporting, or the coordinator stopped
// folding, and the heatmap shows the fabric as it was.
const STALE_WINDOWS = 3;

// fetchLive returns the live mesh's info, or null when the coordinator has
// none or it is off (404).
export async function fetchLive() {
  const res = await request("api/v1/live");
  if (res.status === 404) {
    await res.text();
    return null;
  }
  const info = await readJSON(res);
  return info && info.enabled ? info : null;
}

// fmtSpan formats seconds for people: "12 s", "4 min 30 s", "2 h 5 min".
export function fmtSpan(s) {
  if (!(s >= 0)) return "–";
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) {
    const sec = Math.round(s % 60);
    return `${Math.floor(s / 60)} min${sec ? ` ${sec} s` : ""}`;
  }
  const min = Math.round((s % 3600) / 60);
  return `${Math.floor(s / 3600)} h${min ? ` ${min} min` : ""}`;
}

// liveController keeps state.live ({info, at}: the newest info and when it
// arrived) and the event stream that is open while the Live view shows.
// onWindow(info) runs on every new window.
export function liveController(state, { onWindow, onError }) {
  let stream = null; // AbortController of the open stream
  const showing = () => state.sweepID === LIVE_ID && !!state.live;

  function set(info) {
    state.live = info ? { info, at: Date.now() } : null;
    render();
  }

  // The age grows between windows without a word from the server:
  // extrapolate from when the info arrived.
  const age = () => state.live.info.age_seconds + (Date.now() - state.live.at) / 1000;

  function render() {
    const box = $("live-line");
    box.hidden = !showing();
    if (box.hidden) return;
    const i = state.live.info;
    const a = age();
    const stale = i.window_seconds > 0 && a > STALE_WINDOWS * i.window_seconds;
    $("live-text").textContent = `Live · window ${i.window} · ${fmtSpan(a)} ago · every pair within ${fmtSpan(i.coverage_seconds)}` +
      ` · ≤ ${i.rate_per_hca} probes/s per HCA · ${i.probing} of ${i.members} nodes probing`;
    const mark = $("live-stale");
    mark.hidden = !stale;
    mark.title = stale ? `no new window for ${fmtSpan(a)}, more than ${STALE_WINDOWS} windows of ${fmtSpan(i.window_seconds)}: ` +
      "the heatmap shows the fabric as it was; check the workers' live probing" : "";
    box.dataset.window = String(i.window);
    box.dataset.stale = stale ? "1" : "";
    renderLinks(i);
  }

  // The cables the link flows found losing probes, one badge an episode;
  // a flapping cable keeps one badge and counts its flaps.
  function renderLinks(i) {
    const el = $("live-links");
    const links = i.links || [];
    const head = document.createElement("span");
    head.textContent = i.link_flows > 0 ? ` · ${i.link_flows} link flows` + (links.length ? "" : " · no cable losing probes") : "";
    const badges = links.map((l) => {
      const b = document.createElement("span");
      b.className = `badge link-${l.state}`;
      const flaps = l.flaps ? ` · ${l.flaps} flap${l.flaps > 1 ? "s" : ""}` : "";
      b.textContent = `${l.cable} ${l.state} ${(100 * l.loss).toFixed(1)} %${flaps}`;
      b.title = `${l.lost} of ${l.probes} probes lost (worst ${(100 * l.worst).toFixed(1)} %) on ${l.flows} link flows ` +
        `between ${l.partners} nodes; since window ${l.since_window}, last bad in window ${l.last_bad_window}`;
      return b;
    });
    el.replaceChildren(head, ...badges);
  }

  // sync opens the stream when the Live view shows and closes it otherwise.
  function sync() {
    if (!showing()) {
      if (stream) stream.abort();
      stream = null;
      render();
      return;
    }
    render();
    if (stream) return;
    const abort = new AbortController();
    stream = abort;
    let last = "";
    streamEvents("api/v1/live/events", abort.signal, (name, info) => {
      if (name !== "window") return;
      set(info.enabled ? info : null);
      const key = `${info.plan_id}|${info.window}`;
      if (!info.enabled || key === last) return;
      last = key;
      state.liveWindows.push(info.window);
      onWindow(info);
    })
      .catch((e) => {
        if (!abort.signal.aborted) onError(`live stream: ${e.message}; retrying`);
      })
      .finally(() => {
        if (stream === abort) stream = null; // the next list poll opens another
      });
  }

  setInterval(render, 1000); // the age and the stale mark, between windows
  return { set, sync, render, showing };
}
