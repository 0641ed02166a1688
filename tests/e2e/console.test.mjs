// The web console in Debian's Chromium against a real `gpufleet serve` (docs/console.md): sign
// in, the demo cluster's bars, a waiting job's reason, a migration approved by a second identity
// (and refused to the first), role-aware buttons, a team's own jobs, keyboard, dark mode, and no
// console errors. Screenshots of every page are written to ARTIFACTS.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, startServer, call, eventually, launchBrowser, newPage, signIn, screenshot } from "./harness.mjs";

const CLOUD = `launchLatency: 1m
lifecycleDuration: 2m
failureLatency: 20s
capacity: { ml.m5.xlarge: 10, ml.p5.48xlarge: 10, ml.g5.xlarge: 4 }
`;
let server, browser, admin, migrationId, node;
const example = (name) => readFileSync(join(ROOT, "examples", name), "utf8");

function job(name, share, priority) {
  const j = JSON.parse(example("service-job.json"));
  return { ...j, jobName: name, quotaShareName: share, schedulingPriority: priority };
}

before(async () => {
  server = await startServer({
    identities: { root: ["admin"], alice: ["operator"], bob: ["operator"], victor: ["viewer"], qs1team: ["team:QS1"] },
    simCloud: CLOUD,
  });
  admin = (m, p, b) => call(server, server.tokens.root, m, p, b);
  await admin("POST", "/v1/clusters", example("create_cluster.json"));
  await admin("POST", "/v1/clusters", example("demo-g5-cluster.json"));
  await eventually("both clusters InService", async () => {
    const l = await admin("GET", "/v1/clusters");
    return l.ClusterSummaries.length === 2 && l.ClusterSummaries.every((c) => c.ClusterStatus === "InService");
  });
  await eventually("the 3 g5 instances", async () => (await admin("GET", "/v1/clusters/shared-g5")).InstanceGroups[0].CurrentCount === 3);
  await admin("POST", "/v1/apply", example("quota-shares.json"));
  // QS1's first job runs on its own instance, the second borrows QS2's, the third waits (QS3's
  // instance is reserved, never lent).
  for (const [n, s, p] of [["qs1-p3", "QS1", 3], ["qs1-p2", "QS1", 2], ["qs1-p1", "QS1", 1]]) {
    await admin("POST", "/v1/service-jobs", job(n, s, p));
  }
  await eventually("qs1-p1 waiting with a reason", async () => {
    const j = await admin("GET", "/v1/jobs/qs1-p1");
    return j.status === "RUNNABLE" && j.explanation?.message;
  });
  // A migration needs a spare instance of the node's type: the cloud has one g5 more.
  node = (await admin("GET", "/v1/clusters/shared-g5/nodes")).ClusterNodeSummaries[0].InstanceId;
  // This cluster's policy records a GPU that fell off the bus and leaves the decision to a
  // person; alice decides to migrate the node's work away, which needs a second person.
  await admin("PUT", "/v1/clusters/shared-g5/remediation-policy", { Rules: [{ Fault: "xid:79", Action: "none" }] });
  await admin("POST", `/v1/clusters/shared-g5/nodes/${node}/signals`, {
    Signal: "NVRM: Xid (PCI:0000:18:00): 79, pid=4242, GPU has fallen off the bus.",
  });
  await eventually("the Xid 79 alert to fire", async () => (await admin("GET", `/v1/alerts?node=${node}&state=firing`)).Alerts.length > 0);
  const r = await call(server, server.tokens.alice, "POST", "/v1/remediations", {
    ClusterName: "shared-g5",
    NodeId: node,
    Action: "migrate",
    Detector: "console-e2e",
    RequestId: "row-remap-1",
    Reason: "GPU 0 fell off the bus; move the job before the reboot",
  });
  migrationId = r.RemediationId;
  assert.equal(r.Status, "Proposed");
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

// A fresh page at 1280x800, signed in as `who`, at the page `hash` (the Fleet page without one).
async function openAs(who, hash = "", options) {
  const page = await newPage(browser, options);
  await signIn(page, server, who);
  if (hash) await page.goto(`${server.url}/${hash}`);
  return page;
}

test("SignIn_AWrongTokenIsRefusedAndNothingShows", async () => {
  const page = await newPage(browser);
  await page.goto(server.url + "/");
  await page.getByLabel("API token").fill("gf_not_a_token");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").getByText("That token is not valid here.").waitFor();
  assert.equal(await page.locator("nav").count(), 0);
  assert.deepEqual(page.errors, []);
});

test("Fleet_ShowsEveryClusterWithGroupBarsCostAndWaitingRemediations", async () => {
  const page = await openAs("alice");
  assert.match(page.url(), /#\/fleet$|\/$/);
  const card = page.locator('[data-cluster="my-training-cluster"]');
  await card.waitFor();
  // 10 of the 16 p5 the example asks for exist in this cloud: the bar says so.
  await card.getByRole("img", { name: "worker-gpu-a: 10 of 16 (min 0)" }).waitFor();
  await page.locator('[data-cluster="shared-g5"]').getByRole("img", { name: "g5: 3 of 3 (min 0)" }).waitFor();
  await page.getByRole("table", { name: "Remediations waiting" }).getByText(migrationId).waitFor();
  assert.match(await card.innerText(), /\$[\d,.]+ so far · \$[\d,.]+\/h now/);
  await screenshot(page, "fleet");
  // The cluster's page: a shareable URL, its nodes and events.
  await card.getByRole("link", { name: "my-training-cluster" }).click();
  assert.match(page.url(), /#\/cluster\/my-training-cluster$/);
  // Exact: while the fleet page leaves, its "Instance groups of …" tables may still be there.
  await page.getByRole("table", { name: "Instance groups", exact: true }).waitFor();
  await screenshot(page, "cluster");
  await page.getByRole("tab", { name: "Nodes" }).click();
  await page.getByRole("table", { name: "Nodes" }).locator("tbody tr").nth(9).waitFor();
  await screenshot(page, "cluster-nodes");
  await page.getByRole("tab", { name: "Events" }).click();
  await page.getByRole("list", { name: "Cluster events, newest first" }).locator("li").first().waitFor();
  assert.match(page.url(), /tab=events/);
  assert.deepEqual(page.errors, []);
});

test("Jobs_AWaitingJobShowsTheReasonTheSchedulerPublished", async () => {
  const page = await openAs("alice", "#/jobs");
  await page.getByRole("table", { name: "Jobs" }).getByRole("link", { name: "qs1-p1" }).waitFor();
  await screenshot(page, "jobs");
  await page.getByRole("table", { name: "Jobs" }).getByRole("link", { name: "qs1-p1" }).click();
  const why = page.getByTestId("why");
  await why.getByText("Why it waits").waitFor();
  const api = await admin("GET", "/v1/jobs/qs1-p1");
  assert.ok((await why.innerText()).includes(api.explanation.message), "the page shows the API's explanation verbatim");
  await screenshot(page, "job");
  assert.deepEqual(page.errors, []);
});

test("Quotas_ShowsSharesAsBarsAndWhoBorrows", async () => {
  const page = await openAs("alice", "#/quotas");
  await page.locator('[data-quota-node="share:shared-training-queue/QS1"]').waitFor();
  const borrowing = page.getByRole("table", { name: "Borrowing" });
  await borrowing.getByText("share:shared-training-queue/QS1").waitFor();
  assert.match(await borrowing.innerText(), /QS1\s+share:shared-training-queue\/QS2\s+ml\.g5\.xlarge\s+1/);
  await screenshot(page, "quotas");
  assert.deepEqual(page.errors, []);
});

test("Billing_ShowsCostOverTimeAndExportsCsv", async () => {
  const page = await openAs("alice", "#/billing?by=cluster&window=6h");
  await page.locator(".chart canvas").waitFor();
  await page.getByRole("table", { name: "Totals" }).getByText("my-training-cluster").waitFor();
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export CSV" }).click()]);
  const text = readFileSync(await download.path(), "utf8");
  assert.match(text.split("\n")[0], /^from,to,cluster,cost_usd,billed_seconds$/);
  assert.match(text, /my-training-cluster/);
  await screenshot(page, "billing");
  assert.deepEqual(page.errors, []);
});

test("Health_TheRequesterCannotApproveItsOwnMigrationASecondIdentityCan", async () => {
  const page = await openAs("alice", `#/remediation/${migrationId}`);
  const approve = page.locator('[data-action="approve"]');
  await approve.waitFor();
  assert.equal(await approve.isDisabled(), true, "alice requested it");
  await page.getByTestId("approve-reason").getByText("a second person must approve it").waitFor();
  await screenshot(page, "remediation-requester");
  await page.getByRole("button", { name: "Sign out" }).click();

  await signIn(page, server, "bob");
  await page.goto(server.url + `/#/remediation/${migrationId}`);
  const timeline = page.getByRole("list", { name: "Remediation timeline" }).locator("li");
  await timeline.first().waitFor();
  const before = await timeline.count();
  await page.locator('[data-action="approve"]').click();
  // The page follows the watch stream: the timeline grows past the approval.
  await eventually("the timeline to advance", async () => (await timeline.count()) > before);
  await page.locator("h1 .status").filter({ hasNotText: "Proposed" }).waitFor();
  const rem = await admin("GET", `/v1/remediations/${migrationId}`);
  assert.equal(rem.Approver, "bob");
  const audit = await admin("GET", "/v1/audit?identity=bob");
  assert.ok(
    audit.AuditRecords.some((a) => a.Path === `/v1/remediations/${migrationId}/approve` && a.Code === 200),
    `the approval is in the audit log as bob: ${JSON.stringify(audit.AuditRecords)}`,
  );
  await page.goto(server.url + "/#/health?tab=remediations");
  await page.getByRole("table", { name: "Remediations" }).getByText(migrationId).waitFor();
  await screenshot(page, "health");
  await page.getByRole("tab", { name: "Circuit breakers" }).click();
  await page.getByRole("table", { name: "Circuit breakers" }).getByText("shared-g5").waitFor();
  assert.deepEqual(page.errors, []);
});

test("Roles_AViewerSeesNoButtonsATeamSeesOnlyItsJobs", async () => {
  const page = await openAs("victor", `#/remediation/${migrationId}`);
  await page.getByText("Decisions need the operator or admin role.").waitFor();
  assert.equal(await page.locator("main button").count(), 0);
  await page.goto(server.url + "/#/job/qs1-p1");
  await page.getByTestId("why").waitFor();
  assert.equal(await page.locator("main button").count(), 0);
  await page.getByRole("button", { name: "Sign out" }).click();

  await admin("POST", "/v1/service-jobs", job("qs2-a", "QS2", 0));
  await signIn(page, server, "qs1team");
  await page.goto(server.url + "/#/jobs");
  const table = page.getByRole("table", { name: "Jobs" });
  await table.getByRole("link", { name: "qs1-p1" }).waitFor();
  assert.equal(await table.getByRole("link", { name: "qs2-a" }).count(), 0, "another team's job is invisible");
  assert.deepEqual(page.errors, []);
});

test("Usable_KeyboardNavigationAndDarkMode", async () => {
  const page = await openAs("alice", "", { colorScheme: "dark" });
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
  await page.keyboard.press("g");
  await page.keyboard.press("j");
  await page.getByRole("heading", { name: "Jobs" }).waitFor();
  assert.match(page.url(), /#\/jobs$/);
  await page.keyboard.press("/");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.filter !== undefined), true);
  await page.keyboard.type("qs1-p1");
  await page.keyboard.press("Tab");
  await page.goto(server.url + "/#/fleet");
  await page.locator('[data-cluster="my-training-cluster"]').waitFor();
  await screenshot(page, "fleet-dark");
  await page.getByRole("button", { name: "Toggle dark mode" }).click();
  await page.waitForFunction(() => document.documentElement.dataset.theme === "light");
  assert.deepEqual(page.errors, []);
});
