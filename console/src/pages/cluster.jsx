// Cluster: instance groups, nodes (status, health, workload, billed time), the event timeline
// with filters, and the Slurm view (sinfo, squeue) or the native one (jobs placed here).
import { useApi, Bar, Status, Table, ErrorBox, Loading, Tabs, money, when, href, setQuery, Choice, Pending } from "../lib.jsx";
import { qs } from "../api.js";

const TABS = [
  ["groups", "Instance groups"],
  ["nodes", "Nodes"],
  ["events", "Events"],
  ["workload", "Workload"],
];

function Groups({ c }) {
  return (
    <Table
      label="Instance groups"
      rows={c.InstanceGroups}
      rowKey={(g) => g.InstanceGroupName}
      columns={[
        { label: "Group", key: "InstanceGroupName" },
        { label: "Type", key: "InstanceType" },
        {
          label: "Current / target / min",
          render: (g) => (
            <div class="barline">
              <Bar segments={[{ label: "current", value: g.CurrentCount, tone: g.CurrentCount >= g.TargetCount ? "good" : "warn" }]} markers={[{ label: "target", value: g.TargetCount }, ...(g.MinCount ? [{ label: "min", value: g.MinCount, tone: "min" }] : [])]} max={g.TargetCount} />
              <span class="num">
                {g.CurrentCount}/{g.TargetCount} {g.MinCount ? <small class="muted">min {g.MinCount}</small> : null}
              </span>
            </div>
          ),
        },
        { label: "Status", render: (g) => <Status value={g.Status} /> },
      ]}
    />
  );
}

function Nodes({ name, query }) {
  const { data, error } = useApi(
    {
      nodes: `/v1/clusters/${encodeURIComponent(name)}/nodes`,
      alerts: `/v1/alerts${qs({ cluster: name })}`,
      billing: `/v1/billing${qs({ cluster: name, groupBy: "instance" })}`,
    },
    [name],
    ["Instance", "Alert", "Remediation", "Job"],
  );
  if (!data) return <Pending error={error} what="nodes" />;
  const open = {};
  for (const a of data.alerts.Alerts) if (a.State === "firing" || a.State === "pending") (open[a.NodeId] ||= []).push(a);
  const billed = {};
  for (const i of data.billing.Items) billed[i.InstanceId] = i;
  const filter = (query.node || "").toLowerCase();
  const rows = data.nodes.ClusterNodeSummaries.filter((n) => !filter || JSON.stringify(n).toLowerCase().includes(filter));
  return (
    <>
      <ErrorBox error={error} />
      <label class="filter">
        Filter <input data-filter value={query.node || ""} onInput={(e) => setQuery({ ...query, node: e.target.value })} placeholder="id, group, status, label…" />
      </label>
      <Table
        label="Nodes"
        rows={rows}
        rowKey={(n) => n.InstanceId}
        columns={[
          { label: "Node", key: "InstanceId" },
          { label: "Group", key: "InstanceGroupName" },
          { label: "Status", render: (n) => <Status value={n.InstanceStatus.Status} /> },
          {
            label: "Health",
            render: (n) =>
              open[n.InstanceId] ? (
                <a href={href(["health"], { node: n.InstanceId })}>
                  <Status value={`${open[n.InstanceId][0].Fault} (${open[n.InstanceId][0].State})`} />
                </a>
              ) : n.RemediationId ? (
                <a href={href(["remediation", n.RemediationId])}>
                  <Status value={n.RemediationStatus} />
                </a>
              ) : (
                <Status value={n.Cordoned ? "cordoned" : "healthy"} />
              ),
          },
          { label: "Block", render: (n) => (n.Labels && n.Labels["topology.k8s.aws/network-node-layer-3"]) || "—" },
          { label: "Pods", key: "PodCount" },
          { label: "Billed", render: (n) => (billed[n.InstanceId] ? `${(billed[n.InstanceId].BilledSeconds / 3600).toFixed(1)} h · ${money(billed[n.InstanceId].Cost)}` : "—") },
          { label: "Launched", render: (n) => when(n.LaunchTime) },
        ]}
      />
    </>
  );
}

function Events({ name, query }) {
  const path = `/v1/clusters/${encodeURIComponent(name)}/events${qs({ ResourceType: query.type, EventLevel: query.level, MaxResults: 100 })}`;
  const { data, error } = useApi({ events: path }, [path], null);
  const set = (k, v) => setQuery({ ...query, [k]: v });
  return (
    <>
      <div class="filters">
        <Choice label="Resource" value={query.type} options={["Cluster", "InstanceGroup", "Instance", "Job", "Alert", "Remediation"]} onPick={(v) => set("type", v)} />
        <Choice label="Level" value={query.level} options={["Info", "Warn", "Error"]} onPick={(v) => set("level", v)} />
      </div>
      <ErrorBox error={error} />
      {!data ? (
        <Loading what="events" />
      ) : (
        <ol class="timeline" aria-label="Cluster events, newest first">
          {data.events.Events.map((e) => (
            <li class={`lvl-${e.EventLevel}`}>
              <time>{when(e.EventTime)}</time> <span class="tag">{e.ResourceType}</span> {e.Description}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

function Workload({ c }) {
  const slurm = !!c.Orchestrator?.Slurm;
  const name = encodeURIComponent(c.ClusterName);
  const { data, error } = useApi(slurm ? { sinfo: `/v1/clusters/${name}/slurm/sinfo`, squeue: `/v1/clusters/${name}/slurm/squeue` } : { jobs: "/v1/service-jobs" }, [c.ClusterName, slurm], ["Job", "Instance"]);
  if (!data) return <Pending error={error} what="workload" />;
  if (slurm)
    return (
      <>
        <h3>Partitions (sinfo)</h3>
        <Table label="Partitions" rows={data.sinfo.Partitions} columns={["Partition", "Avail", "Nodes", "State", "NodeList"].map((k) => ({ label: k, key: k }))} />
        <h3>Jobs (squeue)</h3>
        <Table label="Slurm jobs" rows={data.squeue.Jobs} columns={[{ label: "JobId", render: (j) => <a href={href(["job", j.JobId])}>{j.JobId}</a> }, ...["Partition", "Name", "Account", "State", "Time", "Nodes"].map((k) => ({ label: k, key: k })), { label: "NodeList / Reason", render: (j) => j.NodeList || j.Reason }]} />
      </>
    );
  const here = data.jobs.jobSummaryList.filter((j) => j.placement?.cluster === c.ClusterName && !["SUCCEEDED", "FAILED"].includes(j.status));
  return (
    <>
      <h3>Jobs placed here</h3>
      <Table
        label="Jobs placed on this cluster"
        rows={here}
        empty="No job runs here."
        columns={[
          { label: "Job", render: (j) => <a href={href(["job", j.jobId])}>{j.jobName}</a> },
          { label: "Status", render: (j) => <Status value={j.status} /> },
          { label: "Share", render: (j) => j.quotaShareName || j.localQueue || "" },
          { label: "Nodes", render: (j) => (j.placement?.nodes || []).join(", ") },
        ]}
      />
    </>
  );
}

export function ClusterPage({ name, query }) {
  const path = `/v1/clusters/${encodeURIComponent(name || "")}`;
  const { data, error } = useApi({ c: path }, [path], ["Cluster", "InstanceGroup", "Instance"]);
  const tab = query.tab || "groups";
  if (!data) return <Pending error={error} what={`cluster ${name}`} />;
  const c = data.c;
  return (
    <section aria-labelledby="cluster-h">
      <p class="crumbs">
        <a href="#/fleet">Fleet</a> ›
      </p>
      <h1 id="cluster-h">
        {c.ClusterName} <Status value={c.ClusterStatus} />
      </h1>
      <p class="muted">
        {c.Orchestrator?.Slurm ? "Slurm" : "native"} · {c.ClusterArn} · created {when(c.CreationTime)}
      </p>
      <ErrorBox error={error} />
      <Tabs tabs={TABS} current={tab} onPick={(t) => setQuery({ tab: t })} />
      {tab === "groups" ? <Groups c={c} /> : tab === "nodes" ? <Nodes name={name} query={query} /> : tab === "events" ? <Events name={name} query={query} /> : <Workload c={c} />}
    </section>
  );
}
