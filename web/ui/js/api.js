// Talking to /api/v1: the bearer token, JSON errors, the binary heatmap
// layers and the progress event stream.

export class APIError extends Error {
  constructor(status, body, fallback) {
    super((body && body.error) || fallback);
    this.status = status;
    this.field = (body && body.field) || "";
  }
}

// With auth.token set on the coordinator the API wants a bearer token; the
// operator types it once and it stays in this browser's localStorage.
const tokenKey = "rdmamesh.token";
let tokenDeclined = false;

function withToken(opts) {
  // no-cache: revalidate every time; the server's ETag turns an unchanged
  // answer into a 304 the browser serves from its cache.
  const o = Object.assign({ cache: "no-cache" }, opts);
  const token = localStorage.getItem(tokenKey);
  if (token) o.headers = Object.assign({}, o.headers, { Authorization: "Bearer " + token });
  return o;
}

export async function request(path, opts) {
  const sent = localStorage.getItem(tokenKey);
  let res = await fetch(path, withToken(opts));
  if (res.status === 401 && !tokenDeclined) {
    // Requests refused together (the sweep list and the live mesh's
    // state) ask once: a later one finds the answer already stored.
    if (localStorage.getItem(tokenKey) === sent) {
      const token = window.prompt("This rdmamesh coordinator needs its API token (auth.token):");
      if (token) localStorage.setItem(tokenKey, token.trim());
      else tokenDeclined = true; // do not nag on every poll; reload to try again
    }
    if (!tokenDeclined) res = await fetch(path, withToken(opts));
  }
  return res;
}

export async function readJSON(res) {
  const text = await res.text();
  let body = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch (e) {
      body = null;
    }
  }
  if (!res.ok) throw new APIError(res.status, body, `${res.status} ${res.statusText}`);
  return body;
}

export const getJSON = async (path) => readJSON(await request(path));

export const sweepPath = (id, rest) => `api/v1/sweeps/${encodeURIComponent(id)}${rest || ""}`;

// getLayer fetches one heatmap layer: "RML1", a little-endian uint32 header
// length, a JSON header, then one code byte per (src, dst) pair in display
// order (web/layer.go documents the codes).
export async function getLayer(sweep, metric, rail) {
  const res = await request(sweepPath(sweep, `/layer?metric=${metric}&rail=${rail}`));
  if (!res.ok) await readJSON(res); // throws the API's error
  const etag = res.headers.get("ETag") || "";
  const buf = new Uint8Array(await res.arrayBuffer());
  const magic = String.fromCharCode(buf[0], buf[1], buf[2], buf[3]);
  if (buf.length < 8 || magic !== "RML1") throw new Error("unexpected heatmap layer format");
  const hl = new DataView(buf.buffer, buf.byteOffset).getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + hl)));
  const body = buf.subarray(8 + hl);
  if (body.length !== header.n * header.n) throw new Error("truncated heatmap layer");
  return { header, body, etag };
}

// events reads the sweep's Server-Sent Events.
export const events = (sweep, signal, onEvent) => streamEvents(sweepPath(sweep, "/events"), signal, onEvent);

// streamEvents reads Server-Sent Events with fetch, not EventSource:
// EventSource cannot send the bearer token. onEvent(name, data) gets each
// event; the promise settles when the stream ends or signal aborts.
export async function streamEvents(path, signal, onEvent) {
  const res = await request(path, { signal, cache: "no-store" });
  if (!res.ok) await readJSON(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (data) onEvent(name, JSON.parse(data));
    }
  }
}

// download saves an API answer as a file. A plain link cannot carry the
// bearer token, so fetch it and hand the browser a blob.
export async function download(path, filename) {
  const res = await request(path);
  if (!res.ok) await readJSON(res);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
