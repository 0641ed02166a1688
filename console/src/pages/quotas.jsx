// Quotas: the quota tree (quota shares, ElasticQuotaTree, Kueue cohorts and ClusterQueues) as bars
// of nominal, used, borrowed and lent per resource; who borrows from whom; queue depth over time.
import { useApi, Bar, Table, ErrorBox, Loading, Chart, PALETTE, setQuery, Pending } from "../lib.jsx";

const fmt = (x) => (Number.isInteger(x) ? String(x) : x.toFixed(2));
// Bytes as Gi (memory, storage); counts and cores as numbers.
const amount = (res, x) => (/memory|storage/.test(res) ? `${(x / 2 ** 30).toFixed(x % 2 ** 30 ? 1 : 0)}Gi` : fmt(x));

function depthOf(node, byName) {
  let d = 0;
  for (let p = node.Parent; p && byName[p] && d < 16; p = byName[p].Parent) d++;
  return d;
}

// Depth-first order, parents before their children.
function ordered(nodes) {
  const kids = {};
  for (const n of nodes) (kids[n.Parent || ""] ||= []).push(n);
  const out = [];
  const walk = (p) => (kids[p] || []).forEach((n) => (out.push(n), walk(n.Name)));
  walk("");
  return out;
}

function ResourceBar({ r }) {
  // A cohort's quota is its subtree's: its own nominal and its children's. null: unlimited (an
  // ElasticQuotaTree root's resources only its children name): no bar, only the use.
  const quota = r.SubtreeNominal !== undefined ? r.SubtreeNominal : r.Nominal;
  if (quota === null)
    return (
      <div class="barline">
        <span class="res">{r.Resource}</span>
        <span class="num">
          {amount(r.Resource, r.Used)} used <small class="muted">(unlimited)</small>
        </span>
      </div>
    );
  const within = Math.min(r.Used, quota);
  const max = Math.max(quota, r.Used + r.Lent, quota + (r.BorrowingLimit ?? 0));
  return (
    <div class="barline">
      <span class="res">{r.Resource}</span>
      <Bar
        label={`${r.Resource}: nominal ${amount(r.Resource, quota)}, used ${amount(r.Resource, r.Used)}, borrowed ${amount(r.Resource, r.Borrowed)}, lent ${amount(r.Resource, r.Lent)}`}
        segments={[
          { label: "used", value: within, tone: "good" },
          { label: "lent", value: r.Lent, tone: "lent" },
          { label: "borrowed", value: r.Borrowed, tone: "warn" },
        ]}
        markers={[{ label: "nominal", value: quota }]}
        max={max}
      />
      <span class="num">
        {amount(r.Resource, r.Used)}/{amount(r.Resource, quota)}
        {r.Borrowed ? <small class="warn-text"> +{amount(r.Resource, r.Borrowed)} borrowed</small> : null}
        {r.Lent ? <small class="lent-text"> {amount(r.Resource, r.Lent)} lent</small> : null}
      </span>
    </div>
  );
}

export function QuotasPage({ query }) {
  const { data, error } = useApi({ tree: "/v1/quota-tree", history: "/v1/history/queues" }, [], ["Job", "Cluster"]);
  if (!data) return <Pending error={error} what="quotas" />;
  const nodes = ordered(data.tree.Nodes);
  const byName = Object.fromEntries(nodes.map((n) => [n.Name, n]));
  const borrows = nodes.flatMap((n) => n.BorrowsFrom.map((b) => ({ borrower: n.Name, ...b })));
  const leaves = nodes.filter((n) => n.Kind === "Queue");
  const picked = query.queue ? leaves.filter((n) => n.Name === query.queue) : leaves.slice(0, 8);
  const samples = data.history.Samples;
  const times = samples.map((s) => Date.parse(s.Time) / 1000);
  return (
    <section aria-labelledby="quotas-h">
      <h1 id="quotas-h">Quotas</h1>
      <ErrorBox error={error} />
      {nodes.length === 0 ? (
        <p class="muted">
          No quota objects yet: <code>gpufleet apply -f examples/quota-shares.json</code>.
        </p>
      ) : (
        <>
          <p class="legend">
            <span class="sw good" /> used within nominal <span class="sw lent" /> lent to others <span class="sw warn" /> borrowed <span class="sw marker" /> nominal
          </p>
          <table class="tree" aria-label="Quota tree">
            <thead>
              <tr>
                <th scope="col">Node</th>
                <th scope="col">Jobs</th>
                <th scope="col">Resources</th>
              </tr>
            </thead>
            <tbody>
              {nodes.map((n) => (
                <tr data-quota-node={n.Name}>
                  <th scope="row" style={{ paddingLeft: `${0.5 + depthOf(n, byName) * 1.25}rem` }}>
                    {n.Name} <small class="muted">{n.Kind}</small>
                  </th>
                  <td class="num">
                    {n.AdmittedJobs} admitted
                    <br />
                    {n.PendingJobs} pending
                  </td>
                  <td>{n.Resources.length ? n.Resources.map((r) => <ResourceBar r={r} />) : <span class="muted">no quota</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Who borrows from whom</h2>
          <Table
            label="Borrowing"
            rows={borrows}
            empty="Nobody borrows now."
            columns={[
              { label: "Borrower", key: "borrower" },
              { label: "From", key: "From" },
              { label: "Resource", key: "Resource" },
              { label: "Amount", render: (b) => amount(b.Resource, b.Amount) },
            ]}
          />
          <h2>Queue depth over time</h2>
          <div class="filters">
            <label>
              Queue{" "}
              <select value={query.queue || ""} onChange={(e) => setQuery({ ...query, queue: e.target.value })}>
                <option value="">first {Math.min(8, leaves.length)}</option>
                {leaves.map((n) => (
                  <option>{n.Name}</option>
                ))}
              </select>
            </label>
          </div>
          {samples.length < 2 ? (
            <p class="muted">Samples are taken once a minute of the server's clock while something happens; the chart appears after the second.</p>
          ) : (
            <Chart
              times={times}
              stepped
              yLabel="pending jobs"
              series={picked.map((n, i) => ({ label: n.Name, color: PALETTE[i % PALETTE.length], values: samples.map((s) => s.Queues[n.Name]?.Pending ?? null) }))}
            />
          )}
        </>
      )}
    </section>
  );
}
