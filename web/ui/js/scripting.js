// window.rdmamesh: what scripts and the browser tests read from the page
// (web/e2e): the first paint, progress events, layers shown, the grid, and
// where a pair is drawn.

import { APIError } from "./api.js";
import { $ } from "./util.js";

export function scriptingAPI(state, fabric, cabling) {
  const name = (i) => state.grid.nodes[i].name;
  return {
    get firstPaintMs() {
      return state.firstPaintMs;
    },
    get progress() {
      return state.progress;
    },
    get loads() {
      return state.loads;
    },
    get grid() {
      return state.grid;
    },
    // The live mesh's newest info (null when off), and the windows whose
    // events refreshed the Live view.
    get live() {
      return state.live && state.live.info;
    },
    get liveWindows() {
      return state.liveWindows;
    },
    // The Fabric view: whether the topology loaded (status "ready", "none"
    // without one), the plane shown and how many suspects it marked.
    get fabric() {
      return fabric.info();
    },
    // The Cabling view: whether its report loaded and how many findings.
    get cabling() {
      return cabling.info();
    },
    // idle: no matrix load runs or waits to run.
    get idle() {
      return !state.loading && !state.reloadAgain;
    },
    // cellCenter is the client position of pair (i, j) in the pairs view.
    cellCenter(i, j) {
      const d = $("heatmap").dataset;
      const r = $("heatmap").getBoundingClientRect();
      return { x: r.left + Number(d.left) + (j - Number(d.ox) + 0.5) * Number(d.sx), y: r.top + Number(d.top) + (i - Number(d.oy) + 0.5) * Number(d.sy) };
    },
    // findCode returns the first pair whose layer byte is code.
    findCode(code) {
      const l = state.layer;
      if (!l) return null;
      const n = l.header.n;
      const k = l.body.indexOf(code);
      return k < 0 ? null : { i: Math.floor(k / n), j: k % n, src: name(Math.floor(k / n)), dst: name(k % n) };
    },
    APIError,
  };
}
