// How fast the console's pages render with a large fleet (docs/performance.md, "Console"):
// a real serve with one cluster of NODES instances and JOBS queued service jobs, then COUNT
// fresh loads of the Fleet page (and of the Jobs page) in headless Chromium, each timed from
// navigation to the rendered clusters (or jobs). Prints the loads and their median; asserts
// nothing (a benchmark, not a test). Usage: node fleet_load.mjs [NODES] [JOBS] [COUNT]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, startServer, launchBrowser, newPage, eventually } from "./harness.mjs";

const NODES = Number(process.argv[2] || 2000);
const JOBS = Number(process.argv[3] || 10000);
const COUNT = Number(process.argv[4] || 7);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const server = await startServer({
  identities: { root: ["admin"] },
  simSpeed: 600,
  simCloud: `launchLatency: 1m\nlifecycleDuration: 2m\ncapacity: { ml.m5.xlarge: 10, ml.p5.48xlarge: ${NODES}, ml.g5.xlarge: 8 }\n`,
  extraArgs: ["--rate-limit", "0"],
});
const post = async (path, body) => {
  const r = await fetch(server.url + path, { method: "POST", headers: { Authorization: `Bearer ${server.tokens.root}`, "Content-Type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
};
const get = async (path) => (await fetch(server.url + path, { headers: { Authorization: `Bearer ${server.tokens.root}` } })).json();
try {
  const t0 = Date.now();
  const cluster = JSON.parse(readFileSync(join(ROOT, "examples/create_cluster.json"), "utf8"));
  cluster.ClusterName = "big";
  cluster.InstanceGroups.find((g) => g.InstanceGroupName === "worker-gpu-a").InstanceCount = NODES;
  await post("/v1/clusters", cluster);
  await post("/v1/clusters", readFileSync(join(ROOT, "examples/demo-g5-cluster.json"), "utf8"));
  await eventually(`${NODES} workers`, async () => (await get("/v1/clusters/big")).InstanceGroups.find((g) => g.InstanceGroupName === "worker-gpu-a").CurrentCount === NODES, { timeoutMs: 600000 });
  await post("/v1/apply", readFileSync(join(ROOT, "examples/quota-shares.json"), "utf8"));
  const job = JSON.parse(readFileSync(join(ROOT, "examples/service-job.json"), "utf8"));
  for (let i = 0; i < JOBS; i += 16) {
    await Promise.all(Array.from({ length: Math.min(16, JOBS - i) }, (_, k) => post("/v1/service-jobs", { ...job, jobName: `load-${i + k}`, quotaShareName: `QS${1 + ((i + k) % 3)}` })));
  }
  console.log(`fleet loaded in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${NODES} nodes, ${JOBS} jobs`);

  const browser = await launchBrowser();
  async function time(hash, ready) {
    const page = await newPage(browser);
    await page.addInitScript((t) => sessionStorage.setItem("gpufleet.token", t), server.tokens.root);
    await page.goto(server.url + "/" + hash, { waitUntil: "commit" });
    await page.waitForFunction(ready, null, { timeout: 60000, polling: "raf" });
    const ms = await page.evaluate(() => performance.now());
    if (page.errors.length) throw new Error(page.errors.join("\n"));
    await page.context().close();
    return ms;
  }
  const fleetReady = () => document.querySelectorAll('[data-cluster] .bar').length >= 4 && ![...document.querySelectorAll(".card .big")].some((e) => e.textContent === "…");
  const jobsReady = () => document.querySelectorAll('table[aria-label="Jobs"] tbody tr').length > 0;
  for (const [name, hash, ready] of [["fleet", "#/fleet", fleetReady], ["jobs", "#/jobs", jobsReady]]) {
    await time(hash, ready); // warm-up: the server's first read of each kind
    const ms = [];
    for (let i = 0; i < COUNT; i++) ms.push(await time(hash, ready));
    console.log(`${name} page with ${NODES} nodes and ${JOBS} jobs: loads ${ms.map((x) => x.toFixed(0)).join(", ")} ms; median ${median(ms).toFixed(0)} ms`);
  }
  await browser.close();
} finally {
  await server.stop();
}
