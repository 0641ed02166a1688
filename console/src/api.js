// The API as the signed-in token (docs/api.md): every call the console makes goes through here,
// so every action is the same request the CLI would send and lands in the audit log.
const TOKEN_KEY = "gpufleet.token";
const NAME_KEY = "gpufleet.name"; // who to act as on a server without an auth file

export class ApiError extends Error {
  constructor(status, type, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.type = type || "";
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}
export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function actingName() {
  return sessionStorage.getItem(NAME_KEY) || "";
}
export function setActingName(n) {
  if (n) sessionStorage.setItem(NAME_KEY, n);
  else sessionStorage.removeItem(NAME_KEY);
}

function headers(extra) {
  const h = { ...extra };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  else if (actingName()) h["X-Gpufleet-User"] = actingName();
  return h;
}

// The server's clock runs its own time (a --sim-speed server runs faster): every answer carries
// X-Gpufleet-Now, and "3m ago" is counted from it.
let clockOffsetMs = 0;
export function serverNow() {
  return Date.now() + clockOffsetMs;
}

export async function api(path, { method = "GET", body, signal } = {}) {
  const init = { method, headers: headers({}), signal };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const now = Date.parse(r.headers.get("X-Gpufleet-Now") || "");
  if (!isNaN(now)) clockOffsetMs = now - Date.now();
  const text = await r.text();
  let data = text;
  if ((r.headers.get("Content-Type") || "").includes("json") && text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!r.ok) {
    const o = typeof data === "object" && data ? data : {};
    throw new ApiError(r.status, o.__type, o.message || String(text).slice(0, 300));
  }
  return data;
}

// A query string of the set values only.
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : "";
}

// Follows GET /v1/watch (server-sent events) with fetch, which can send the token (EventSource
// cannot), and resumes after the last id it saw when the stream ends.
export function watch(onEvent, onState) {
  let stopped = false;
  let since = null;
  let controller = null;
  async function run() {
    while (!stopped) {
      controller = new AbortController();
      try {
        const url = `/v1/watch${since === null ? "" : `?sinceSeq=${since}`}`;
        const r = await fetch(url, { headers: headers({ Accept: "text/event-stream" }), signal: controller.signal });
        if (!r.ok) throw new ApiError(r.status, "", `watch: HTTP ${r.status}`);
        onState("live");
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let cut;
          while ((cut = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            let id = null, kind = "message", data = "";
            for (const line of block.split("\n")) {
              if (line.startsWith("id:")) id = line.slice(3).trim();
              else if (line.startsWith("event:")) kind = line.slice(6).trim();
              else if (line.startsWith("data:")) data += line.slice(5).trim();
            }
            if (id !== null) since = id;
            if (kind === "watching") {
              if (since === null) since = String(JSON.parse(data).appliedSeq);
              continue;
            }
            if (data) onEvent(kind, JSON.parse(data));
          }
        }
      } catch (e) {
        if (stopped) return;
        onState(e instanceof ApiError && e.status === 401 ? "signed-out" : "reconnecting");
      }
      if (!stopped) await new Promise((res) => setTimeout(res, 2000));
    }
  }
  run();
  return () => {
    stopped = true;
    if (controller) controller.abort();
  };
}
