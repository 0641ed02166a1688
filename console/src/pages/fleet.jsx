// Fleet: the on-call's first screen. Clusters with per-group current/target/min bars, status,
// capacity, cost so far and burn rate; alerts firing; remediations waiting for a person.
import { useApi, Bar, Status, Table, ErrorBox, Loading, money, ago, href } from "../lib.jsx";
import { api } from "../api.js";

const KINDS = ["Cluster", "InstanceGroup", "Instance", "Alert", "Remediation"];

// DescribeCluster of every listed cluster (the list has no groups).
async function describeAll() {
  const list = await api("/v1/clusters");
  return Promise.all(list.ClusterSummaries.map((c) => api(`/v1/clusters/${encodeURIComponent(c.ClusterName)}`)));
}

function GroupBars({ cluster }) {
  return (
    <table class="groups" aria-label={`Instance groups of ${cluster.ClusterName}`}>
      <tbody>
        {cluster.InstanceGroups.map((g) => (
          <tr>
            <th scope="row">
              {g.InstanceGroupName} <small class="muted">{g.InstanceType}</small>
            </th>
            <td class="barcell">
              <Bar
                label={`${g.InstanceGroupName}: ${g.CurrentCount} of ${g.TargetCount} (min ${g.MinCount ?? 0})`}
                segments={[{ label: "current", value: g.CurrentCount, tone: g.CurrentCount >= g.TargetCount ? "good" : "warn" }]}
                markers={[
                  { label: "target", value: g.TargetCount },
                  ...(g.MinCount ? [{ label: "min", value: g.MinCount, tone: "min" }] : []),
                ]}
                max={g.TargetCount}
              />
            </td>
            <td class="num" data-testid="group-count">
              {g.CurrentCount}/{g.TargetCount}
              {g.MinCount ? <small class="muted"> min {g.MinCount}</small> : null}
            </td>
            <td>
              <Status value={g.Status} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function FleetPage({ can }) {
  const { data, error } = useApi(
    {
      clusters: describeAll,
      billing: "/v1/billing?groupBy=cluster",
      alerts: "/v1/alerts?state=firing",
      proposed: "/v1/remediations?status=Proposed",
    },
    [],
    KINDS,
  );
  const clusters = data?.clusters;
  const cost = {};
  for (const i of data?.billing?.Items || []) cost[i.ClusterName] = i;
  const firing = data?.alerts?.Alerts || [];
  const proposed = data?.proposed?.Remediations || [];
  return (
    <section aria-labelledby="fleet-h">
      <h1 id="fleet-h">Fleet</h1>
      <ErrorBox error={error} />
      <div class="cards">
        <div class="card">
          <div class="big">{clusters ? clusters.length : "…"}</div>clusters
        </div>
        <div class="card">
          <div class="big">{clusters ? clusters.reduce((n, c) => n + c.InstanceGroups.reduce((m, g) => m + g.CurrentCount, 0), 0) : "…"}</div>instances running
        </div>
        <div class={`card ${firing.length ? "bad" : ""}`}>
          <div class="big">{data ? firing.length : "…"}</div>alerts firing
        </div>
        <div class={`card ${proposed.length ? "warn" : ""}`}>
          <div class="big">{data ? proposed.length : "…"}</div>remediations waiting
        </div>
        <div class="card">
          <div class="big">{data ? money(data.billing.Total) : "…"}</div>billed so far
        </div>
      </div>

      <h2>Clusters</h2>
      {!clusters ? <Loading what="clusters" /> : clusters.length === 0 ? <p class="muted">No clusters yet: <code>gpufleet cluster create -f examples/create_cluster.json</code>.</p> : null}
      <div class="clusters">
        {(clusters || []).map((c) => {
          const b = cost[c.ClusterName];
          const current = c.InstanceGroups.reduce((m, g) => m + g.CurrentCount, 0);
          const target = c.InstanceGroups.reduce((m, g) => m + g.TargetCount, 0);
          return (
            <article class="cluster" data-cluster={c.ClusterName}>
              <h3>
                <a href={href(["cluster", c.ClusterName])}>{c.ClusterName}</a> <Status value={c.ClusterStatus} />
              </h3>
              <p class="muted">
                {current} of {target} instances · {b ? money(b.Cost) : "$0.00"} so far · {b ? money(b.BurnRatePerHour) : "$0.00"}/h now ·{" "}
                {c.Orchestrator?.Slurm ? "Slurm" : "native"} · created {ago(c.CreationTime)}
              </p>
              <GroupBars cluster={c} />
            </article>
          );
        })}
      </div>

      <h2>Remediations waiting for a person</h2>
      <Table
        label="Remediations waiting"
        rows={proposed}
        empty="Nothing waits for a decision."
        columns={[
          { label: "Remediation", render: (r) => <a href={href(["remediation", r.RemediationId])}>{r.RemediationId}</a> },
          { label: "Cluster", render: (r) => <a href={href(["cluster", r.ClusterName])}>{r.ClusterName}</a> },
          { label: "Node", key: "NodeId" },
          { label: "Action", render: (r) => r.EffectiveAction || r.Action },
          { label: "Fault", key: "Fault" },
          { label: "Requested by", key: "Requester" },
          { label: "Since", render: (r) => ago(r.CreatedAt) },
        ]}
      />

      <h2>Alerts firing</h2>
      <Table
        label="Alerts firing"
        rows={firing}
        empty="No alert is firing."
        columns={[
          { label: "Severity", render: (a) => <Status value={a.Severity} /> },
          { label: "Cluster", render: (a) => <a href={href(["cluster", a.ClusterName])}>{a.ClusterName}</a> },
          { label: "Node", key: "NodeId" },
          { label: "Fault", key: "Fault" },
          { label: "Summary", key: "Summary" },
          { label: "Since", render: (a) => ago(a.FiredAt || a.FirstSeen) },
        ]}
      />
    </section>
  );
}
