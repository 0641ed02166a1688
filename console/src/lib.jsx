// What every page shares: the hash router (every page has a URL to share), the live bus fed by
// the watch stream, data loading, and small components.
import { useEffect, useRef, useState, useCallback } from "preact/hooks";
import uPlot from "uplot";
import { api, serverNow } from "./api.js";

// ---- routing: #/cluster/NAME?tab=nodes ----
export function parseHash() {
  const h = location.hash.replace(/^#/, "") || "/fleet";
  const [path, q = ""] = h.split("?");
  const decode = (x) => {
    try {
      return decodeURIComponent(x);
    } catch {
      return x; // a bad escape in a hand-typed URL: shown as typed, "not found" by the page
    }
  };
  return { parts: path.split("/").filter(Boolean).map(decode), query: Object.fromEntries(new URLSearchParams(q)) };
}
export function href(parts, query = {}) {
  const q = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== "" && v !== undefined && v !== null)).toString();
  return `#/${parts.map(encodeURIComponent).join("/")}${q ? `?${q}` : ""}`;
}
export function useRoute() {
  const [route, setRoute] = useState(parseHash());
  useEffect(() => {
    const on = () => setRoute(parseHash());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}
// Replaces the query of the current page (filters), keeping it shareable.
export function setQuery(query) {
  const { parts } = parseHash();
  history.replaceState(null, "", href(parts, query));
  dispatchEvent(new HashChangeEvent("hashchange"));
}

// ---- live: events from the watch stream, by ResourceType ----
const listeners = new Set();
export function publishEvent(kind, ev) {
  for (const l of listeners) if (!l.kinds || l.kinds.includes(kind)) l.fn(kind, ev);
}
// A number that changes (at most every 500 ms) when an event of these kinds arrives.
export function useLiveTick(kinds) {
  const [tick, setTick] = useState(0);
  const timer = useRef(null);
  useEffect(() => {
    const l = {
      kinds,
      fn: () => {
        if (timer.current) return;
        timer.current = setTimeout(() => {
          timer.current = null;
          setTick((t) => t + 1);
        }, 500);
      },
    };
    listeners.add(l);
    return () => {
      listeners.delete(l);
      clearTimeout(timer.current);
      timer.current = null;
    };
  }, [kinds && kinds.join(",")]);
  return tick;
}

// Loads `paths` (an object of name → API path, or → an async function for what takes several
// calls) and reloads when the deps or live events of `kinds` change. Keeps the last data while reloading, so a page never flickers.
export function useApi(paths, deps, kinds) {
  const tick = useLiveTick(kinds);
  const [state, setState] = useState({ data: null, error: null });
  const seq = useRef(0);
  const load = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const entries = await Promise.all(Object.entries(paths).map(async ([k, p]) => [k, !p ? null : typeof p === "function" ? await p() : await api(p)]));
      if (mine === seq.current) setState({ data: Object.fromEntries(entries), error: null });
    } catch (e) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error: e }));
    }
  }, deps);
  useEffect(() => {
    load();
  }, [load, tick]);
  return { ...state, reload: load };
}

// ---- formatting ----
export function money(s) {
  const n = Number(s);
  if (!isFinite(n)) return s ?? "";
  return "$" + n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}
export function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z").replace(/:00Z$/, "Z");
}
export function ago(iso, now = serverNow()) {
  const s = Math.round((now - new Date(iso)) / 1000);
  if (!isFinite(s)) return "";
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

// ---- components ----
export function Status({ value }) {
  const v = String(value ?? "");
  const tone = /fail|error|critical|repair|unhealthy|open|rejected/i.test(v)
    ? "bad"
    : /pending|progress|creating|updating|waiting|proposed|runnable|queued|warn|inspect|burn|draining|cordon/i.test(v)
      ? "warn"
      : /service|running|succeeded|healthy|closed|firing/i.test(v)
        ? (/firing/i.test(v) ? "bad" : "good")
        : "neutral";
  return <span class={`status ${tone}`}>{v}</span>;
}

// One horizontal bar of stacked segments [{label, value, tone}] against `max`, with markers
// [{label, value}] drawn as ticks (a target, a minimum).
export function Bar({ segments, max, markers = [], label }) {
  const m = Math.max(max || 0, ...segments.map((s) => s.value), ...markers.map((k) => k.value), 1);
  const text = label ?? segments.map((s) => `${s.label} ${s.value}`).concat(markers.map((k) => `${k.label} ${k.value}`)).join(", ");
  return (
    <div class="bar" role="img" aria-label={text} title={text}>
      {segments.map((s) => (
        <div class={`seg ${s.tone || ""}`} style={{ width: `${(100 * s.value) / m}%` }} />
      ))}
      {markers.map((k) => (
        <div class={`marker ${k.tone || ""}`} style={{ left: `calc(${(100 * k.value) / m}% - 1px)` }} title={`${k.label} ${k.value}`} />
      ))}
    </div>
  );
}

export function ErrorBox({ error }) {
  if (!error) return null;
  return (
    <div class="error" role="alert">
      {error.type ? <b>{error.type}: </b> : null}
      {error.message}
    </div>
  );
}

export function Loading({ what }) {
  return <p class="muted">Loading {what}…</p>;
}

// What a page shows before its data came: the error of the last try, or that it is loading.
export function Pending({ error, what }) {
  return error ? <ErrorBox error={error} /> : <Loading what={what} />;
}

// A table: columns [{key, label, render?(row)}], rows; `empty` when there are none. At most
// `limit` rows are drawn, with a line saying how many more there are.
export function Table({ columns, rows, empty = "None.", limit = 500, rowKey, label }) {
  if (!rows || rows.length === 0) return <p class="muted">{empty}</p>;
  const shown = rows.slice(0, limit);
  return (
    <div class="table-wrap">
      <table aria-label={label}>
        <thead>
          <tr>{columns.map((c) => <th scope="col">{c.label}</th>)}</tr>
        </thead>
        <tbody>
          {shown.map((r, i) => (
            <tr key={rowKey ? rowKey(r) : i}>{columns.map((c) => <td>{c.render ? c.render(r) : r[c.key]}</td>)}</tr>
          ))}
        </tbody>
      </table>
      {rows.length > limit ? <p class="muted">{rows.length - limit} more not shown: narrow the filters.</p> : null}
    </div>
  );
}

// A uPlot time series: `times` in seconds, `series` [{label, values, color}].
export function Chart({ times, series, height = 220, stepped = false, yLabel = "" }) {
  const el = useRef(null);
  const plot = useRef(null);
  useEffect(() => {
    if (!el.current) return;
    const width = Math.max(300, el.current.clientWidth || 600);
    const dark = document.documentElement.dataset.theme === "dark";
    const axis = { stroke: dark ? "#c9d1d9" : "#333", grid: { stroke: dark ? "#30363d" : "#e5e5e5" }, ticks: { stroke: dark ? "#30363d" : "#ccc" } };
    const opts = {
      width,
      height,
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, paths: stepped ? uPlot.paths.stepped({ align: 1 }) : undefined }))],
      axes: [axis, { ...axis, label: yLabel, size: 60 }],
      legend: { live: false },
    };
    const data = [times, ...series.map((s) => s.values)];
    plot.current = new uPlot(opts, data, el.current);
    const ro = new ResizeObserver(() => plot.current && plot.current.setSize({ width: Math.max(300, el.current.clientWidth), height }));
    ro.observe(el.current);
    return () => {
      ro.disconnect();
      plot.current.destroy();
      plot.current = null;
    };
  }, [JSON.stringify(series.map((s) => s.label)), times.length, times[0], times[times.length - 1], JSON.stringify(series.map((s) => s.values))]);
  return <div class="chart" ref={el} />;
}

export function Tabs({ tabs, current, onPick }) {
  return (
    <div class="tabs" role="tablist">
      {tabs.map(([id, label]) => (
        <button role="tab" aria-selected={current === id} class={current === id ? "on" : ""} onClick={() => onPick(id)}>
          {label}
        </button>
      ))}
    </div>
  );
}

// Colours of chart series, readable on both themes.
export const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

// A filter of the page's query: a labelled select of `options` with "any" (the empty value) first.
export function Choice({ label, value, options, onPick }) {
  return (
    <label>
      {label}{" "}
      <select value={value || ""} onChange={(e) => onPick(e.target.value)}>
        <option value="">any</option>
        {options.map((o) => (
          <option>{o}</option>
        ))}
      </select>
    </label>
  );
}
