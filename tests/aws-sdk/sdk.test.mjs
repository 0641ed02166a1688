// gpufleet driven by the official AWS SDK for JavaScript v3 (docs/aws-compatibility.md): the
// seed's create_cluster.json through CreateClusterCommand to InService, its nodes listed page by
// page, an update, a delete; the quota-share example through the Batch client, jobs submitted,
// listed, re-prioritised and terminated; errors caught by their SDK classes; requests signed
// with Signature V4 and checked against the auth file's access keys.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  SageMakerClient,
  CreateClusterCommand,
  DescribeClusterCommand,
  ListClustersCommand,
  UpdateClusterCommand,
  DeleteClusterCommand,
  DescribeClusterNodeCommand,
  BatchAddClusterNodesCommand,
  BatchDeleteClusterNodesCommand,
  ListClusterEventsCommand,
  DescribeClusterEventCommand,
  ResourceNotFound,
  paginateListClusterNodes,
  paginateListClusters,
} from "@aws-sdk/client-sagemaker";
import {
  BatchClient,
  ClientException,
  CreateServiceEnvironmentCommand,
  CreateSchedulingPolicyCommand,
  CreateJobQueueCommand,
  CreateQuotaShareCommand,
  DescribeJobQueuesCommand,
  DescribeQuotaShareCommand,
  UpdateQuotaShareCommand,
  UpdateJobQueueCommand,
  DeleteJobQueueCommand,
  SubmitServiceJobCommand,
  DescribeServiceJobCommand,
  ListServiceJobsCommand,
  UpdateServiceJobCommand,
  TerminateServiceJobCommand,
  GetJobQueueSnapshotCommand,
  paginateListQuotaShares,
  paginateListServiceJobs,
} from "@aws-sdk/client-batch";
import { ROOT, startServer, eventually } from "../support/serve.mjs";

const CLOUD = `launchLatency: 1m
lifecycleDuration: 2m
failureLatency: 20s
capacity: { ml.m5.xlarge: 10, ml.p5.48xlarge: 16, ml.g5.xlarge: 4 }
`;
const example = (name) => JSON.parse(readFileSync(join(ROOT, "examples", name), "utf8"));
let server;
const clients = {};

function client(Kind, who, override = {}) {
  return new Kind({
    endpoint: server.url,
    region: "us-east-1",
    credentials: { ...server.credentials[who], ...override },
    maxAttempts: 1,
  });
}

// The error a call fails with (it must fail).
async function failure(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail("expected the call to fail");
}

before(async () => {
  server = await startServer({
    accessKeys: { root: ["admin"], victor: ["viewer"], qs1team: ["team:QS1"] },
    simCloud: CLOUD,
  });
  clients.sm = client(SageMakerClient, "root");
  clients.batch = client(BatchClient, "root");
});

after(async () => {
  await server?.stop();
});

test("SageMaker: the seed's create_cluster.json through CreateClusterCommand to InService, listed, updated, deleted", async () => {
  const sm = clients.sm;
  const created = await sm.send(new CreateClusterCommand(example("create_cluster.json")));
  assert.match(created.ClusterArn, /^arn:gpufleet:/);
  await sm.send(new CreateClusterCommand(example("demo-g5-cluster.json")));
  const cluster = await eventually("my-training-cluster InService with its 18 instances", async () => {
    const c = await sm.send(new DescribeClusterCommand({ ClusterName: "my-training-cluster" }));
    const running = c.InstanceGroups.reduce((n, g) => n + g.CurrentCount, 0);
    return c.ClusterStatus === "InService" && running === 18 && c;
  }, { timeoutMs: 60000 });
  // Timestamps arrive as epoch seconds, which the SDK turns into dates.
  assert.ok(cluster.CreationTime instanceof Date && !isNaN(cluster.CreationTime));
  assert.equal(cluster.ClusterArn, created.ClusterArn);
  // By ARN too, as DescribeCluster allows.
  const byArn = await sm.send(new DescribeClusterCommand({ ClusterName: created.ClusterArn }));
  assert.equal(byArn.ClusterName, "my-training-cluster");

  const names = [];
  for await (const p of paginateListClusters({ client: sm, pageSize: 1 }, {})) {
    assert.ok(p.ClusterSummaries.length <= 1);
    names.push(...p.ClusterSummaries.map((c) => c.ClusterName));
  }
  assert.deepEqual(names.sort(), ["my-training-cluster", "shared-g5"]);

  const ids = [];
  for await (const p of paginateListClusterNodes({ client: sm, pageSize: 5 }, { ClusterName: "my-training-cluster" })) {
    assert.ok(p.ClusterNodeSummaries.length <= 5);
    for (const n of p.ClusterNodeSummaries) {
      assert.ok(n.LaunchTime instanceof Date);
      ids.push(n.InstanceId);
    }
  }
  assert.equal(ids.length, 18);
  assert.equal(new Set(ids).size, 18, "no node twice across pages");

  const node = await sm.send(new DescribeClusterNodeCommand({ ClusterName: "my-training-cluster", NodeId: ids[0] }));
  assert.equal(node.NodeDetails.InstanceId, ids[0]);
  assert.equal(node.NodeDetails.InstanceStatus.Status, "Running");

  // The g5 cluster grows by one through UpdateCluster and by one more through BatchAddClusterNodes.
  const g5 = example("demo-g5-cluster.json");
  g5.InstanceGroups[0].InstanceCount = 2;
  await sm.send(new UpdateClusterCommand({ ClusterName: "shared-g5", InstanceGroups: g5.InstanceGroups }));
  const added = await sm.send(new BatchAddClusterNodesCommand({ ClusterName: "shared-g5", NodesToAdd: [{ InstanceGroupName: "g5", IncrementTargetCountBy: 1 }] }));
  assert.equal(added.Successful[0].InstanceGroupName, "g5");
  assert.deepEqual(added.Failed, []);
  const g5nodes = await eventually("shared-g5 at 3 instances", async () => {
    const c = await sm.send(new DescribeClusterCommand({ ClusterName: "shared-g5" }));
    return c.InstanceGroups[0].TargetCount === 3 && c.InstanceGroups[0].CurrentCount === 3 && c;
  }, { timeoutMs: 60000 });
  assert.equal(g5nodes.InstanceGroups[0].TargetCount, 3);

  const events = await sm.send(new ListClusterEventsCommand({ ClusterName: "my-training-cluster", MaxResults: 3 }));
  assert.equal(events.Events.length, 3);
  assert.ok(events.NextToken, "more events than one page");
  assert.ok(events.Events[0].EventTime instanceof Date);
  const more = await sm.send(new ListClusterEventsCommand({ ClusterName: "my-training-cluster", MaxResults: 3, NextToken: events.NextToken }));
  assert.ok(!more.Events.some((e) => events.Events.some((f) => f.EventId === e.EventId)));
  const one = await sm.send(new DescribeClusterEventCommand({ ClusterName: "my-training-cluster", EventId: events.Events[1].EventId }));
  assert.equal(one.EventDetails.EventId, events.Events[1].EventId);
  assert.ok(one.EventDetails.EventTime instanceof Date);

  const gone = await sm.send(new BatchDeleteClusterNodesCommand({ ClusterName: "my-training-cluster", NodeIds: [ids[17], "i-00000000000000000"] }));
  assert.deepEqual(gone.Successful, [ids[17]]);
  assert.equal(gone.Failed[0].NodeId, "i-00000000000000000");

  const deleted = await sm.send(new DeleteClusterCommand({ ClusterName: "shared-g5" }));
  assert.match(deleted.ClusterArn, /^arn:gpufleet:/);
  await eventually("shared-g5 gone", async () => {
    const e = await failure(sm.send(new DescribeClusterCommand({ ClusterName: "shared-g5" })));
    return e instanceof ResourceNotFound;
  }, { timeoutMs: 60000 });
});

test("SageMaker: errors arrive as the SDK's classes, with their status", async () => {
  const sm = clients.sm;
  const missing = await failure(sm.send(new DescribeClusterCommand({ ClusterName: "no-such-cluster" })));
  assert.ok(missing instanceof ResourceNotFound, `got ${missing.name}`);
  assert.equal(missing.$metadata.httpStatusCode, 404);
  assert.match(missing.message, /no-such-cluster/);

  const bad = example("create_cluster.json");
  bad.ClusterName = "bad name!";
  const invalid = await failure(sm.send(new CreateClusterCommand(bad)));
  assert.equal(invalid.name, "ValidationException");
  assert.equal(invalid.$metadata.httpStatusCode, 400);
  assert.match(invalid.message, /ClusterName/);

  const viewer = client(SageMakerClient, "victor");
  const denied = await failure(viewer.send(new CreateClusterCommand(example("demo-g5-cluster.json"))));
  assert.equal(denied.name, "AccessDeniedException");
  assert.equal(denied.$metadata.httpStatusCode, 403);
  // A viewer reads.
  const seen = await viewer.send(new ListClustersCommand({}));
  assert.ok(seen.ClusterSummaries.some((c) => c.ClusterName === "my-training-cluster"));

  const wrongSecret = client(SageMakerClient, "root", { secretAccessKey: "not-the-secret-at-all-0000" });
  const forged = await failure(wrongSecret.send(new ListClustersCommand({})));
  assert.equal(forged.name, "InvalidSignatureException");
  assert.equal(forged.$metadata.httpStatusCode, 403);

  const stranger = client(SageMakerClient, "root", { accessKeyId: "AKIANOTINTHEFILE0000" });
  const unknown = await failure(stranger.send(new ListClustersCommand({})));
  assert.equal(unknown.name, "UnrecognizedClientException");
});

test("Batch: the quota-share example through the Batch client; jobs submitted, listed, re-prioritised, terminated", async () => {
  const b = clients.batch;
  const qs = example("quota-shares.json");
  const env = await b.send(new CreateServiceEnvironmentCommand(qs.serviceEnvironment));
  assert.equal(env.serviceEnvironmentName, "training-env");
  assert.match(env.serviceEnvironmentArn, /^arn:gpufleet:/);
  await b.send(new CreateSchedulingPolicyCommand(qs.schedulingPolicy));
  const queue = await b.send(new CreateJobQueueCommand(qs.jobQueue));
  assert.equal(queue.jobQueueName, "shared-training-queue");
  for (const share of qs.quotaShares) {
    const s = await b.send(new CreateQuotaShareCommand(share));
    assert.equal(s.quotaShareName, share.quotaShareName);
  }
  const described = await b.send(new DescribeJobQueuesCommand({ jobQueues: [queue.jobQueueArn] }));
  assert.equal(described.jobQueues.length, 1);
  assert.equal(described.jobQueues[0].status, "VALID");
  assert.equal(described.jobQueues[0].state, "ENABLED");

  const shares = [];
  for await (const p of paginateListQuotaShares({ client: b, pageSize: 2 }, { jobQueue: "shared-training-queue" })) {
    assert.ok(p.quotaShares.length <= 2);
    shares.push(...p.quotaShares.map((s) => s.quotaShareName));
  }
  assert.deepEqual(shares.sort(), ["QS1", "QS2", "QS3"]);

  // The g5 instances the shares divide.
  const sm = clients.sm;
  await sm.send(new CreateClusterCommand({ ...example("demo-g5-cluster.json"), ClusterName: "g5-pool" }));
  await eventually("g5-pool's 3 instances", async () => {
    const c = await sm.send(new DescribeClusterCommand({ ClusterName: "g5-pool" }));
    return c.InstanceGroups[0].CurrentCount === 3;
  }, { timeoutMs: 60000 });

  // As AWS sends it: serviceRequestPayload is JSON text.
  const job = example("service-job.json");
  const submit = (jobName, priority) =>
    b.send(new SubmitServiceJobCommand({ ...job, jobName, schedulingPriority: priority, serviceRequestPayload: JSON.stringify(job.serviceRequestPayload) }));
  const p3 = await submit("qs1-p3", 3);
  const p2 = await submit("qs1-p2", 2);
  const p1 = await submit("qs1-p1", 1);
  assert.match(p3.jobArn, /^arn:gpufleet:/);

  const status = async (id) => (await b.send(new DescribeServiceJobCommand({ jobId: id }))).status;
  await eventually("two QS1 jobs running (one on QS2's lent instance), the third waiting", async () => {
    return (await status(p3.jobId)) === "RUNNING" && (await status(p2.jobId)) === "RUNNING" && (await status(p1.jobId)) === "RUNNABLE";
  }, { timeoutMs: 60000 });
  const waiting = await b.send(new DescribeServiceJobCommand({ jobId: p1.jobId }));
  assert.equal(typeof waiting.serviceRequestPayload, "string");
  assert.deepEqual(JSON.parse(waiting.serviceRequestPayload), job.serviceRequestPayload);
  assert.equal(typeof waiting.createdAt, "number");
  assert.equal(waiting.quotaShareName, "QS1");
  assert.deepEqual(waiting.capacityUsage, [{ capacityUnit: "ml.g5.xlarge", quantity: 1 }]);

  // ListServiceJobs lists RUNNING jobs when no status is given, as AWS Batch does; a page at a time.
  const running = [];
  for await (const p of paginateListServiceJobs({ client: b, pageSize: 1 }, { jobQueue: "shared-training-queue" })) {
    assert.ok(p.jobSummaryList.length <= 1);
    running.push(...p.jobSummaryList.map((j) => j.jobName));
  }
  assert.deepEqual(running.sort(), ["qs1-p2", "qs1-p3"]);
  const byName = await b.send(new ListServiceJobsCommand({ jobQueue: "shared-training-queue", filters: [{ name: "JOB_NAME", values: ["qs1-p1"] }] }));
  assert.deepEqual(byName.jobSummaryList.map((j) => j.jobId), [p1.jobId]);

  // Showback: the front of the queue and what each share uses.
  const snap = await b.send(new GetJobQueueSnapshotCommand({ jobQueue: "shared-training-queue" }));
  assert.equal(snap.frontOfQueue.jobs[0].jobArn, p1.jobArn);
  const used = Object.fromEntries(snap.queueUtilization.quotaShareUtilization.topCapacityUtilization.map((u) => [u.quotaShareName, u.capacityUsage[0].quantity]));
  assert.equal(used.QS3, 0, "QS3's reserved instance is never lent");
  assert.equal(snap.queueUtilization.totalCapacityUsage[0].quantity, 2);

  // A QS2 job reclaims the instance QS2 lent: QS1's borrowing job is preempted.
  const qs2 = await b.send(new SubmitServiceJobCommand({ ...job, jobName: "qs2-job", quotaShareName: "QS2", serviceRequestPayload: JSON.stringify(job.serviceRequestPayload) }));
  await eventually("qs2-job running on QS2's own instance again", async () => (await status(qs2.jobId)) === "RUNNING", { timeoutMs: 60000 });
  const reclaimed = await b.send(new DescribeServiceJobCommand({ jobId: p2.jobId }));
  assert.equal(reclaimed.status, "RUNNABLE");
  assert.equal(reclaimed.preemptionSummary.preemptedAttemptCount, 1);
  assert.equal(typeof reclaimed.preemptionSummary.recentPreemptedAttempts[0].stoppedAt, "number");

  // Raising QS1's waiting job above its running priority-3 job displaces it (in-share preemption).
  const updated = await b.send(new UpdateServiceJobCommand({ jobId: p1.jobId, schedulingPriority: 4 }));
  assert.equal(updated.jobId, p1.jobId);
  await eventually("qs1-p1 running after displacing qs1-p3", async () => (await status(p1.jobId)) === "RUNNING", { timeoutMs: 60000 });
  const displaced = await b.send(new DescribeServiceJobCommand({ jobId: p3.jobId }));
  assert.equal(displaced.status, "RUNNABLE");
  assert.equal(displaced.preemptionSummary.preemptedAttemptCount, 1);

  await b.send(new TerminateServiceJobCommand({ jobId: p1.jobId, reason: "done with it" }));
  const ended = await eventually("qs1-p1 FAILED by termination", async () => {
    const j = await b.send(new DescribeServiceJobCommand({ jobId: p1.jobId }));
    return j.status === "FAILED" && j;
  });
  assert.equal(ended.isTerminated, true);
  assert.match(ended.statusReason, /done with it/);

  // Updates change the fields they name and keep the rest.
  await b.send(new UpdateQuotaShareCommand({ quotaShareArn: "QS1", resourceSharingConfiguration: { strategy: "LEND_AND_BORROW", borrowLimit: 100 } }));
  const qs1 = await b.send(new DescribeQuotaShareCommand({ quotaShareArn: "QS1" }));
  assert.equal(qs1.resourceSharingConfiguration.borrowLimit, 100);
  assert.equal(qs1.preemptionConfiguration.inSharePreemption, "ENABLED");
  assert.match(qs1.jobQueueArn, /shared-training-queue$/);
  await b.send(new UpdateJobQueueCommand({ jobQueue: queue.jobQueueArn, priority: 5 }));
  const after = await b.send(new DescribeJobQueuesCommand({ jobQueues: ["shared-training-queue"] }));
  assert.equal(after.jobQueues[0].priority, 5);
  assert.equal(after.jobQueues[0].schedulingPolicyArn, "quota-policy");
});

test("Batch: errors arrive as ClientException, and a team's key works only for its share", async () => {
  const b = clients.batch;
  const missing = await failure(b.send(new DescribeServiceJobCommand({ jobId: "no-such-job" })));
  assert.ok(missing instanceof ClientException, `got ${missing.name}`);
  assert.match(missing.message, /ResourceNotFound.*no-such-job/);

  const job = example("service-job.json");
  const wrongShare = await failure(b.send(new SubmitServiceJobCommand({ ...job, quotaShareName: "QS9", serviceRequestPayload: JSON.stringify(job.serviceRequestPayload) })));
  assert.ok(wrongShare instanceof ClientException);
  assert.match(wrongShare.message, /QS9/);

  const inUse = await failure(b.send(new DeleteJobQueueCommand({ jobQueue: "shared-training-queue" })));
  assert.ok(inUse instanceof ClientException);
  assert.match(inUse.message, /ConflictException/);

  const team = client(BatchClient, "qs1team");
  const mine = await team.send(new SubmitServiceJobCommand({ ...job, jobName: "team-job", serviceRequestPayload: JSON.stringify(job.serviceRequestPayload) }));
  assert.ok(mine.jobId);
  const theirs = await failure(team.send(new SubmitServiceJobCommand({ ...job, jobName: "not-mine", quotaShareName: "QS2", serviceRequestPayload: JSON.stringify(job.serviceRequestPayload) })));
  assert.equal(theirs.name, "AccessDeniedException");
  assert.equal(theirs.$metadata.httpStatusCode, 403);
});
