// Health: alerts with their evidence (the raw line verbatim), remediations with their timeline
// and the decisions (approve, reject, cancel as the signed-in identity), circuit breakers with
// reset, hosts and tickets.
import { useApi, Status, Table, ErrorBox, Loading, Tabs, when, ago, href, setQuery, Choice, Pending } from "../lib.jsx";
import { api, qs } from "../api.js";
import { useState } from "preact/hooks";

const TABS = [
  ["alerts", "Alerts"],
  ["remediations", "Remediations"],
  ["breakers", "Circuit breakers"],
  ["hosts", "Hosts"],
  ["tickets", "Tickets"],
];
const KINDS = ["Alert", "Remediation", "Host", "Instance", "Cluster"];

function Evidence({ items }) {
  if (!items?.length) return null;
  return (
    <ul class="evidence">
      {items.map((e) => (
        <li>
          <time>{when(e.At)}</time> {e.Present === false ? <span class="tag">cleared</span> : null}
          <pre>{e.Text}</pre>
        </li>
      ))}
    </ul>
  );
}

function Alerts({ query }) {
  const path = `/v1/alerts${qs({ state: query.state, node: query.node })}`;
  const { data, error } = useApi({ a: path }, [path], KINDS);
  return (
    <>
      <div class="filters">
        <Choice label="State" value={query.state} options={["pending", "firing", "resolved", "discarded"]} onPick={(v) => setQuery({ ...query, state: v })} />
        <label>
          Node <input data-filter value={query.node || ""} onChange={(e) => setQuery({ ...query, node: e.target.value })} placeholder="instance id" />
        </label>
      </div>
      <ErrorBox error={error} />
      {!data ? (
        <Loading what="alerts" />
      ) : data.a.Alerts.length === 0 ? (
        <p class="muted">No alerts.</p>
      ) : (
        [...data.a.Alerts].reverse().map((a) => (
          <article class="alert" data-alert={a.AlertId}>
            <h3>
              <Status value={a.State} /> <Status value={a.Severity} /> {a.Fault} on {a.NodeId} <small class="muted">({a.ClusterName}, {a.Detector})</small>
            </h3>
            <p>{a.Summary}</p>
            <p class="muted">
              first seen {when(a.FirstSeen)} · last {when(a.LastSeen)} · {a.Observations} observation(s) · action {a.Action}
              {a.Support ? ` · ${a.Support}` : ""}
            </p>
            <Evidence items={a.Evidence} />
          </article>
        ))
      )}
    </>
  );
}

function Remediations({ query }) {
  const path = `/v1/remediations${qs({ status: query.status, node: query.node })}`;
  const { data, error } = useApi({ r: path }, [path], KINDS);
  return (
    <>
      <div class="filters">
        <Choice label="Status" value={query.status} options={["Proposed", "Approved", "WaitingForIdle", "Draining", "Executing", "Rejoining", "Succeeded", "Failed", "Cancelled", "Rejected"]} onPick={(v) => setQuery({ ...query, status: v })} />
      </div>
      <ErrorBox error={error} />
      {!data ? (
        <Loading what="remediations" />
      ) : (
        <Table
          label="Remediations"
          rows={[...data.r.Remediations].reverse()}
          empty="No remediations."
          columns={[
            { label: "Remediation", render: (r) => <a href={href(["remediation", r.RemediationId])}>{r.RemediationId}</a> },
            { label: "Status", render: (r) => <Status value={r.Status} /> },
            { label: "Action", render: (r) => r.EffectiveAction || r.Action },
            { label: "Cluster", key: "ClusterName" },
            { label: "Node", key: "NodeId" },
            { label: "Fault", key: "Fault" },
            { label: "Requester", key: "Requester" },
            { label: "Approver", render: (r) => (r.AutoApproved ? "auto" : r.Approver) },
            { label: "Created", render: (r) => ago(r.CreatedAt) },
          ]}
        />
      )}
    </>
  );
}

// The circuit breaker of every cluster (there is one per cluster, and no list of them).
async function allBreakers() {
  const list = await api("/v1/clusters");
  return Promise.all(list.ClusterSummaries.map((c) => api(`/v1/clusters/${encodeURIComponent(c.ClusterName)}/circuit-breaker`)));
}

function Breakers({ can }) {
  const [msg, setMsg] = useState(null);
  const { data, error, reload } = useApi({ rows: allBreakers }, [], KINDS);
  async function reset(name) {
    setMsg(null);
    try {
      await api(`/v1/clusters/${encodeURIComponent(name)}/circuit-breaker/reset`, { method: "POST", body: {} });
      reload();
    } catch (e) {
      setMsg(e);
    }
  }
  if (!data) return <Pending error={error} what="circuit breakers" />;
  return (
    <>
      <ErrorBox error={msg || error} />
      <Table
        label="Circuit breakers"
        rows={data.rows}
        columns={[
          { label: "Cluster", render: (b) => <a href={href(["cluster", b.ClusterName])}>{b.ClusterName}</a> },
          { label: "State", render: (b) => <Status value={b.State} /> },
          { label: "Auto-approvals in window", render: (b) => `${b.AutoApprovalsInWindow} of ${b.MaxAuto} per ${b.Window}` },
          { label: "Reason", key: "Reason" },
          { label: "Tripped", render: (b) => when(b.TrippedAt) },
          { label: "Reset", render: (b) => (b.ResetBy ? `${b.ResetBy} ${when(b.ResetAt)}` : "") },
          { label: "", render: (b) => (can.operate && b.State === "Open" ? <button onClick={() => reset(b.ClusterName)}>Reset</button> : null) },
        ]}
      />
    </>
  );
}

function Hosts() {
  const { data, error } = useApi({ h: "/v1/hosts", t: "/v1/tickets" }, [], KINDS);
  if (!data) return <Pending error={error} what="hosts" />;
  const rows = [...data.h.Hosts].sort((a, b) => (a.Status === "InService") - (b.Status === "InService"));
  return <Table label="Hosts" rows={rows} columns={["HostId", "Status", "ClusterName", "NodeId", "InstanceType", "Reason"].map((k) => ({ label: k, key: k, render: k === "Status" ? (h) => <Status value={h.Status} /> : undefined })).concat([{ label: "Last critical", render: (h) => when(h.LastCriticalAlert) }])} />;
}

function Tickets() {
  const { data, error } = useApi({ t: "/v1/tickets" }, [], KINDS);
  if (!data) return <Pending error={error} what="tickets" />;
  if (!data.t.Tickets.length) return <p class="muted">No repair tickets.</p>;
  return data.t.Tickets.map((t) => (
    <article class="alert">
      <h3>
        {t.TicketId} · {t.HostId} <small class="muted">({t.ClusterName}/{t.NodeId}, {t.InstanceType}, opened {when(t.OpenedAt)})</small>
      </h3>
      <p>{t.Summary}</p>
      <Table label="Burn-in checks" rows={t.Checks || []} columns={[{ label: "Check", render: (c) => c.Name || c.Check }, { label: "Result", render: (c) => <Status value={c.Result} /> }, { label: "Log", render: (c) => <pre>{c.Log}</pre> }]} />
    </article>
  ));
}

export function HealthPage({ query, can }) {
  const tab = query.tab || "alerts";
  return (
    <section aria-labelledby="health-h">
      <h1 id="health-h">Health</h1>
      <Tabs tabs={TABS} current={tab} onPick={(t) => setQuery({ tab: t })} />
      {tab === "alerts" ? <Alerts query={query} /> : tab === "remediations" ? <Remediations query={query} /> : tab === "breakers" ? <Breakers can={can} /> : tab === "hosts" ? <Hosts /> : <Tickets />}
    </section>
  );
}

// The steps a remediation goes through (docs/remediation.md), and the status at each.
const STEPS = [
  ["Proposed", "requested"],
  ["Approved", "approved"],
  ["WaitingForIdle", "cordon → wait"],
  ["Draining", "drain"],
  ["Executing", "act"],
  ["Rejoining", "rejoin"],
  ["Succeeded", "done"],
];

// The alerts a remediation was requested on, with their raw lines.
function AlertEvidence({ node, ids }) {
  const path = `/v1/alerts${qs({ node })}`;
  const { data, error } = useApi({ a: path }, [path], ["Alert"]);
  if (!data) return <Pending error={error} what="evidence" />;
  const alerts = data.a.Alerts.filter((a) => ids.includes(a.AlertId));
  if (!alerts.length) return <p class="muted">{ids.join(", ") || "No evidence recorded."}</p>;
  return alerts.map((a) => (
    <article class="alert" data-alert={a.AlertId}>
      <h3>
        {a.AlertId} <Status value={a.State} /> <Status value={a.Severity} /> {a.Fault}
      </h3>
      <p>{a.Summary}</p>
      <Evidence items={a.Evidence} />
    </article>
  ));
}

export function RemediationPage({ id, can }) {
  const path = `/v1/remediations/${encodeURIComponent(id || "")}`;
  const { data, error, reload } = useApi({ r: path }, [path], ["Remediation", "Alert", "Instance"]);
  const [err, setErr] = useState(null);
  const [reason, setReason] = useState("");
  if (!data) return <Pending error={error} what={`remediation ${id}`} />;
  const r = data.r;
  const action = r.EffectiveAction || r.Action;
  const ownTwoPerson = ["migrate", "delete"].includes(String(action).toLowerCase()) && r.Requester.trim().toLowerCase() === can.subject.trim().toLowerCase();
  const reached = STEPS.findIndex(([s]) => s === r.Status);
  async function decide(verb) {
    setErr(null);
    try {
      await api(`/v1/remediations/${encodeURIComponent(r.RemediationId)}/${verb}`, { method: "POST", body: reason ? { Reason: reason } : {} });
      reload();
    } catch (e) {
      setErr(e);
    }
  }
  const open = !["Succeeded", "Failed", "Cancelled", "Rejected"].includes(r.Status);
  return (
    <section aria-labelledby="rem-h">
      <p class="crumbs">
        <a href="#/health?tab=remediations">Remediations</a> ›
      </p>
      <h1 id="rem-h">
        {r.RemediationId} <Status value={r.Status} />
      </h1>
      <p>
        <b>{action}</b> of node {r.NodeId} on <a href={href(["cluster", r.ClusterName])}>{r.ClusterName}</a> for {r.Fault || r.Detector}; requested by <b>{r.Requester}</b>
        {r.Approver ? (
          <>
            , approved by <b>{r.AutoApproved ? "policy (auto)" : r.Approver}</b>
          </>
        ) : null}
        .
      </p>
      {r.EffectiveActionReason ? <p class="muted">{r.EffectiveActionReason}</p> : null}
      <ol class="steps" aria-label="Progress">
        {STEPS.map(([s, label], i) => (
          <li class={reached >= i ? "done" : ""} aria-current={reached === i ? "step" : undefined}>
            {label}
          </li>
        ))}
      </ol>
      {can.operate && open ? (
        <div class="actions">
          <label>
            Reason <input value={reason} onInput={(e) => setReason(e.target.value)} placeholder="optional" />
          </label>
          {r.Status === "Proposed" ? (
            <>
              <button data-action="approve" onClick={() => decide("approve")} disabled={ownTwoPerson} title={ownTwoPerson ? `You requested this ${action}; a second person must approve it` : "Approve as " + can.subject}>
                Approve
              </button>
              <button data-action="reject" class="danger" onClick={() => decide("reject")}>
                Reject
              </button>
            </>
          ) : null}
          <button data-action="cancel" onClick={() => decide("cancel")}>
            Cancel
          </button>
          {ownTwoPerson && r.Status === "Proposed" ? <p class="note" data-testid="approve-reason">You requested this {action}: a second person must approve it.</p> : null}
        </div>
      ) : !can.operate ? (
        <p class="muted">Decisions need the operator or admin role.</p>
      ) : null}
      <ErrorBox error={err} />
      <h2>Timeline</h2>
      <ol class="timeline" aria-label="Remediation timeline">
        {(r.Timeline || []).map((e) => (
          <li>
            <time>{when(e.EventTime)}</time> {e.Description}
          </li>
        ))}
      </ol>
      <h2>Evidence</h2>
      <AlertEvidence node={r.NodeId} ids={Array.isArray(r.Evidence) ? r.Evidence : []} />
    </section>
  );
}
