// Colours and code tables shared by the heatmap, its legend and the
// drill-down. Codes match web/layer.go.

// Status codes, in severity order so "worst" is the larger code. Okabe-Ito
// colours: distinguishable with the common colour-vision deficiencies; ok
// (blue) and failed (vermillion) also differ strongly in lightness.
export const STATUS = [
  null,
  { key: "ok", label: "ok", color: "#0072B2" },
  { key: "untested", label: "untested", color: "#DDDDDD" },
  { key: "slow-latency", label: "slow latency", color: "#F0E442" },
  { key: "low-bandwidth", label: "low bandwidth", color: "#CC79A7" },
  { key: "failed", label: "failed", color: "#D55E00" },
];
export const STATUS_CODE = Object.fromEntries(STATUS.filter(Boolean).map((s, i) => [s.key, i + 1]));

// Value codes: 0 none, 1 untested, 2 failed, 3..255 buckets of the scale.
export const V_UNTESTED = 1;
export const V_FAILED = 2;
export const FIRST_BUCKET = 3;
export const BUCKETS = 256 - FIRST_BUCKET;

export const EMPTY = "#FFFFFF";

// Viridis as a polynomial fit (perceptually uniform, readable in greyscale
// and with every common colour-vision deficiency).
const VC = [
  [0.2777273272234177, 0.005407344544966578, 0.3340998053353061],
  [0.1050930431085774, 1.404613529898575, 1.384590162594685],
  [-0.3308618287255563, 0.214847559468213, 0.09509516302823659],
  [-4.634230498983486, -5.799100973351585, -19.33244095627987],
  [6.228269936347081, 14.17993336680509, 56.69055260068105],
  [4.776384997670288, -13.74514537774601, -65.35303263337234],
  [-5.435455855934631, 4.645852612178535, 26.3124352495832],
];

export function viridis(t) {
  t = Math.min(1, Math.max(0, t));
  const out = [0, 0, 0];
  for (let c = 0; c < 3; c++) {
    let v = 0;
    for (let k = VC.length - 1; k >= 0; k--) v = v * t + VC[k][c];
    out[c] = Math.round(255 * Math.min(1, Math.max(0, v)));
  }
  return out;
}

const hexRGB = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
export const rgbCSS = ([r, g, b]) => `rgb(${r},${g},${b})`;

// bucketT is where a value bucket sits on its scale, 0..1.
export const bucketT = (b) => (b - FIRST_BUCKET + 0.5) / BUCKETS;

// shadeT maps a scale position to the palette so that healthy is always
// bright and bad is always dark, whichever way the metric improves.
export const shadeT = (t, better) => (better === "lower" ? 1 - t : t);

// lut builds the 256-entry colour table of a layer as packed RGBA for
// ImageData (little-endian: 0xAABBGGRR).
export function lut(header) {
  const table = new Uint32Array(256);
  const pack = ([r, g, b]) => ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
  table[0] = pack(hexRGB(EMPTY));
  if (header.metric === "status") {
    for (let c = 1; c < STATUS.length; c++) table[c] = pack(hexRGB(STATUS[c].color));
    return table;
  }
  table[V_UNTESTED] = pack(hexRGB(STATUS[2].color));
  table[V_FAILED] = pack(hexRGB(STATUS[5].color));
  for (let b = FIRST_BUCKET; b < 256; b++) table[b] = pack(viridis(shadeT(bucketT(b), header.better)));
  return table;
}

// rankTable orders codes by how bad they are, for "worst of a block" when
// several pairs share one pixel or one rollup cell: empty < untested <
// healthy … unhealthy < failed.
export function rankTable(header) {
  const rank = new Int16Array(256);
  if (header.metric === "status") {
    rank.set([-1, 1, 0, 3, 4, 5]); // ok ranks above untested: a gap is not a fault
    return rank;
  }
  rank[0] = -1;
  rank[V_UNTESTED] = 0;
  rank[V_FAILED] = 1000;
  for (let b = FIRST_BUCKET; b < 256; b++) rank[b] = header.better === "lower" ? b : 256 + FIRST_BUCKET - b;
  return rank;
}

// bucketValue is the figure a bucket stands for (the middle of its slice).
export function bucketValue(scale, b) {
  const t = bucketT(b);
  if (scale.kind === "log" && scale.lo > 0 && scale.hi > scale.lo) return scale.lo * Math.pow(scale.hi / scale.lo, t);
  return scale.lo + t * (scale.hi - scale.lo);
}

// Categorical colours for rails in charts (Okabe-Ito, black last).
export const RAIL_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];

// HCA rollup: share of an HCA's cells that are bad, in four steps from the
// ok blue to the failed vermillion through Okabe-Ito's light orange.
export const HCA_STEPS = [
  { upTo: 0, label: "no bad cells", color: "#0072B2" },
  { upTo: 0.1, label: "≤ 10% bad", color: "#56B4E9" },
  { upTo: 0.5, label: "≤ 50% bad", color: "#E69F00" },
  { upTo: 1, label: "> 50% bad", color: "#D55E00" },
];

export function hcaColor(bad, tested) {
  if (!tested) return STATUS[2].color;
  const share = bad / tested;
  return HCA_STEPS.find((s) => share <= s.upTo).color;
}
