// Runs fleet_load.mjs (2,000 nodes, 10,000 jobs, 3 timed loads per page) as a test: it passes
// when the fleet builds and both pages render without console errors; the times are printed for
// docs/performance.md, never compared with a bound (shared machines are noisy).
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import assert from "node:assert/strict";

test("FleetLoad_FleetAndJobsPagesRenderWith2000NodesAnd10000Jobs", () => {
  const r = spawnSync(process.execPath, ["fleet_load.mjs", "2000", "10000", "3"], { encoding: "utf8", timeout: 540000 });
  process.stdout.write(r.stdout + r.stderr);
  assert.equal(r.status, 0);
  assert.match(r.stdout, /fleet page with 2000 nodes and 10000 jobs: .* median \d+ ms/);
  assert.match(r.stdout, /jobs page with 2000 nodes and 10000 jobs: .* median \d+ ms/);
});
