// Jobs: a filterable list (tenant, state, cluster) and a job's page with its pods, placement,
// history, and why it waits (the condition the scheduler publishes).
import { useApi, Status, Table, ErrorBox, Loading, when, href, setQuery, Choice, Pending } from "../lib.jsx";
import { api, qs } from "../api.js";
import { useState } from "preact/hooks";

const STATES = ["RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "SUCCEEDED", "FAILED"];
const tenantOf = (j) => j.quotaShareName || j.localQueue || j.namespace || "";

export function JobsPage({ query }) {
  const path = `/v1/service-jobs${qs({ jobStatus: query.state })}`;
  const { data, error } = useApi({ jobs: path }, [path], ["Job"]);
  const set = (k, v) => setQuery({ ...query, [k]: v });
  const all = data?.jobs.jobSummaryList || [];
  const tenants = [...new Set(all.map(tenantOf).filter(Boolean))].sort();
  const clusters = [...new Set(all.map((j) => j.placement?.cluster).filter(Boolean))].sort();
  const text = (query.q || "").toLowerCase();
  const rows = all
    .filter((j) => (!query.tenant || tenantOf(j) === query.tenant) && (!query.cluster || j.placement?.cluster === query.cluster) && (!text || `${j.jobName} ${j.jobId}`.toLowerCase().includes(text)))
    .reverse();
  return (
    <section aria-labelledby="jobs-h">
      <h1 id="jobs-h">Jobs</h1>
      <div class="filters">
        <label>
          Find <input data-filter value={query.q || ""} onInput={(e) => set("q", e.target.value)} placeholder="name or id" />
        </label>
        <Choice label="Tenant" value={query.tenant} options={tenants} onPick={(v) => set("tenant", v)} />
        <Choice label="State" value={query.state} options={STATES} onPick={(v) => set("state", v)} />
        <Choice label="Cluster" value={query.cluster} options={clusters} onPick={(v) => set("cluster", v)} />
      </div>
      <ErrorBox error={error} />
      {!data ? (
        <Loading what="jobs" />
      ) : (
        <>
          <p class="muted">
            {rows.length} of {all.length} jobs, newest first
          </p>
          <Table
            label="Jobs"
            rows={rows}
            rowKey={(j) => j.jobId}
            columns={[
              { label: "Job", render: (j) => <a href={href(["job", j.jobId])}>{j.jobName}</a> },
              { label: "Status", render: (j) => <Status value={j.status} /> },
              { label: "Tenant", render: tenantOf },
              { label: "Priority", key: "schedulingPriority" },
              { label: "Cluster", render: (j) => j.placement?.cluster || "" },
              { label: "Reason", render: (j) => <span class="reason">{j.statusReason}</span> },
              { label: "Submitted", render: (j) => when(new Date(j.createdAt).toISOString()) },
            ]}
          />
        </>
      )}
    </section>
  );
}

function Actions({ job, can, onDone }) {
  const [err, setErr] = useState(null);
  const [prio, setPrio] = useState(job.schedulingPriority);
  if (["SUCCEEDED", "FAILED"].includes(job.status)) return null;
  const mayChange = can.admin || can.team;
  if (!mayChange) return null;
  async function act(fn) {
    setErr(null);
    try {
      await fn();
      onDone();
    } catch (e) {
      setErr(e);
    }
  }
  return (
    <div class="actions">
      <label>
        Priority <input type="number" min="0" max="9999" value={prio} onInput={(e) => setPrio(e.target.value)} />
      </label>
      <button onClick={() => act(() => api(`/v1/service-jobs/${job.jobId}`, { method: "PATCH", body: { schedulingPriority: Number(prio) } }))}>Set priority</button>
      <button class="danger" onClick={() => confirm(`Terminate ${job.jobName}?`) && act(() => api(`/v1/service-jobs/${job.jobId}/terminate`, { method: "POST", body: { reason: "terminated from the console" } }))}>
        Terminate
      </button>
      <ErrorBox error={err} />
    </div>
  );
}

export function JobPage({ id, can }) {
  const path = `/v1/jobs/${encodeURIComponent(id || "")}`;
  const { data, error, reload } = useApi({ job: path }, [path], ["Job"]);
  if (!data) return <Pending error={error} what={`job ${id}`} />;
  const j = data.job;
  const why = j.explanation;
  return (
    <section aria-labelledby="job-h">
      <p class="crumbs">
        <a href="#/jobs">Jobs</a> ›
      </p>
      <h1 id="job-h">
        {j.jobName} <Status value={j.status} />
      </h1>
      <p class="muted">
        {j.jobId} · {j.kind} · {tenantOf(j)} · priority {j.schedulingPriority}
      </p>
      <ErrorBox error={error} />
      {why ? (
        <div class={`why ${why.kind === "NotWaiting" ? "" : "waiting"}`} data-testid="why">
          <h2>{why.kind === "NotWaiting" ? "State" : "Why it waits"}</h2>
          <p>
            {why.reason ? <b>{why.reason}: </b> : null}
            {why.message}
          </p>
          {why.quotaNode ? (
            <p class="muted">
              quota node {why.quotaNode}
              {why.resource ? ` · ${why.resource}: requested ${JSON.stringify(why.requested)}, available ${JSON.stringify(why.available)}, short ${JSON.stringify(why.shortfall)}` : ""}
              {why.since ? ` · since ${when(why.since)}` : ""}
            </p>
          ) : null}
        </div>
      ) : j.statusReason ? (
        <p class="reason">{j.statusReason}</p>
      ) : null}
      <Actions job={j} can={can} onDone={reload} />
      <h2>Placement</h2>
      {j.placement ? (
        <>
          <p>
            on <a href={href(["cluster", j.placement.cluster])}>{j.placement.cluster}</a>
          </p>
          <Table label="Pods" rows={j.placement.pods || []} columns={[{ label: "Pod", key: "name" }, { label: "Node", key: "node" }]} />
        </>
      ) : (
        <p class="muted">Not placed.</p>
      )}
      <h2>Preemptions</h2>
      <Table
        label="Preemptions"
        rows={j.preemptionSummary?.recentPreemptedAttempts || []}
        empty="Never preempted."
        columns={[
          { label: "At", render: (p) => when(new Date(p.preemptedAt).toISOString()) },
          { label: "By", render: (p) => <a href={href(["job", p.preemptedBy])}>{p.preemptedByName || p.preemptedBy}</a> },
          { label: "Rule", key: "rule" },
          { label: "Reason", key: "statusReason" },
        ]}
      />
      <h2>History</h2>
      <ol class="timeline" aria-label="Job history">
        {(j.events || j.history || []).map((e) => (
          <li>
            <time>{when(e.time)}</time> <span class="tag">{e.reason}</span> {e.message}
          </li>
        ))}
      </ol>
    </section>
  );
}
