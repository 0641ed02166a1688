// Billing: cost over time per cluster, instance group or quota share, and the totals, exportable
// as CSV.
import { useApi, Table, ErrorBox, Loading, Chart, PALETTE, money, setQuery } from "../lib.jsx";
import { qs } from "../api.js";

const GROUPS = [
  ["cluster", "Cluster"],
  ["group", "Instance group"],
  ["share", "Quota share"],
];
const WINDOWS = { "6h": [6 * 3600, "15m"], "24h": [24 * 3600, "1h"], "7d": [7 * 86400, "6h"], "30d": [30 * 86400, "1d"] };

function keyOf(item, by) {
  if (by === "share") return `${item.JobQueue}/${item.QuotaShareName}`;
  if (by === "group") return `${item.ClusterName}/${item.InstanceGroupName}`;
  return item.ClusterName;
}

function csv(rows) {
  const cell = (v) => (/[",\n]/.test(String(v)) ? `"${String(v).replaceAll('"', '""')}"` : String(v));
  return rows.map((r) => r.map(cell).join(",")).join("\n") + "\n";
}

export function BillingPage({ query }) {
  const by = GROUPS.some((g) => g[0] === query.by) ? query.by : "cluster";
  const win = WINDOWS[query.window] ? query.window : "24h";
  const [seconds, step] = WINDOWS[win];
  const path = `/v1/billing${qs({ groupBy: by, from: `${seconds}s`, step })}`;
  const { data, error } = useApi({ b: path }, [path], ["Cluster", "Instance", "Job"]);
  const set = (k, v) => setQuery({ ...query, [k]: v });
  let chart = null;
  let rows = [];
  if (data) {
    const series = data.b.Series;
    const keys = [...new Set(series.flatMap((s) => s.Items.map((i) => keyOf(i, by))))].sort();
    const times = series.map((s) => Date.parse(s.From) / 1000);
    chart = {
      times,
      series: keys.slice(0, 10).map((k, i) => ({ label: k, color: PALETTE[i % PALETTE.length], values: series.map((s) => Number(s.Items.find((it) => keyOf(it, by) === k)?.Cost || 0)) })),
    };
    rows = data.b.Items;
  }
  function download() {
    const s = data.b.Series;
    const keys = [...new Set(s.flatMap((x) => x.Items.map((i) => keyOf(i, by))))].sort();
    const out = [["from", "to", by, "cost_usd", "billed_seconds"]];
    for (const bucket of s) for (const k of keys) {
      const it = bucket.Items.find((i) => keyOf(i, by) === k);
      if (it) out.push([bucket.From, bucket.To, k, it.Cost, it.BilledSeconds]);
    }
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([csv(out)], { type: "text/csv" }));
    a.download = `gpufleet-billing-${by}-${win}.csv`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }
  return (
    <section aria-labelledby="billing-h">
      <h1 id="billing-h">Billing</h1>
      <div class="filters">
        <label>
          By{" "}
          <select value={by} onChange={(e) => set("by", e.target.value)}>
            {GROUPS.map(([v, l]) => (
              <option value={v}>{l}</option>
            ))}
          </select>
        </label>
        <label>
          Window{" "}
          <select value={win} onChange={(e) => set("window", e.target.value)}>
            {Object.keys(WINDOWS).map((w) => (
              <option>{w}</option>
            ))}
          </select>
        </label>
        <button onClick={download} disabled={!data}>
          Export CSV
        </button>
      </div>
      <ErrorBox error={error} />
      {!data ? (
        <Loading what="billing" />
      ) : (
        <>
          <p>
            <b>{money(data.b.Total)}</b> in the last {win} <span class="muted">(per-instance metering, {data.b.Step} buckets)</span>
          </p>
          <Chart times={chart.times} series={chart.series} stepped yLabel="USD per bucket" />
          <Table
            label="Totals"
            rows={rows}
            columns={[
              { label: GROUPS.find((g) => g[0] === by)[1], render: (i) => keyOf(i, by) },
              ...(by === "share" ? [{ label: "Jobs", key: "Jobs" }] : [{ label: "Instances", key: "Instances" }, { label: "Burn rate", render: (i) => `${money(i.BurnRatePerHour)}/h` }]),
              { label: "Billed hours", render: (i) => (i.BilledSeconds / 3600).toFixed(1) },
              { label: "Cost", render: (i) => money(i.Cost) },
            ]}
          />
        </>
      )}
    </section>
  );
}
