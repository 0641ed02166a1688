// What the tests that drive a real `gpufleet serve` from Node.js share (tests/e2e for the console,
// tests/aws-sdk for the AWS SDKs): the server on a free loopback port with an auth file of fresh
// tokens and access keys, the API as one of them, and polling. Only Node.js built-ins.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const BINARY = process.env.GPUFLEET_BINARY || join(ROOT, "build/gpufleet");

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// identities: {name: roles[]} → tokens {name: "gf_…"}; accessKeys: {name: roles[]} → AWS
// credentials {name: {accessKeyId, secretAccessKey}} that sign requests as `name`.
export async function startServer({ identities = {}, accessKeys = {}, simSpeed = 120, simCloud, extraArgs = [] }) {
  const dir = mkdtempSync(join(tmpdir(), "gpufleet-e2e-"));
  const tokens = {};
  const entries = Object.entries(identities).map(([subject, roles]) => {
    const token = `gf_e2e_${subject}_${randomBytes(16).toString("hex")}`;
    tokens[subject] = token;
    const sha256 = createHash("sha256").update(token).digest("hex");
    return `  - { sha256: ${sha256}, subject: ${subject}, roles: [${roles.map((r) => JSON.stringify(r)).join(", ")}] }`;
  });
  const credentials = {};
  const keys = Object.entries(accessKeys).map(([subject, roles]) => {
    const accessKeyId = `AKIAGF${randomBytes(7).toString("hex").toUpperCase()}`;
    const secretAccessKey = randomBytes(30).toString("base64");
    credentials[subject] = { accessKeyId, secretAccessKey };
    return `  - { accessKeyId: ${accessKeyId}, secretAccessKey: "${secretAccessKey}", subject: ${subject}, roles: [${roles.map((r) => JSON.stringify(r)).join(", ")}] }`;
  });
  let auth = entries.length ? `tokens:\n${entries.join("\n")}\n` : "";
  if (keys.length) auth += `accessKeys:\n${keys.join("\n")}\n`;
  writeFileSync(join(dir, "auth.yaml"), auth);
  const args = ["serve", "--data-dir", join(dir, "data"), "--listen", "127.0.0.1:0", "--auth-file", join(dir, "auth.yaml"), "--sim-speed", String(simSpeed)];
  if (simCloud) {
    writeFileSync(join(dir, "cloud.yaml"), simCloud);
    args.push("--sim-cloud", join(dir, "cloud.yaml"));
  }
  const child = spawn(BINARY, [...args, ...extraArgs], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  let url = null;
  for (let i = 0; i < 200 && !url; i++) {
    const m = log.match(/serving on (http:\/\/127\.0\.0\.1:\d+)/);
    if (m) url = m[1];
    else if (child.exitCode !== null) throw new Error(`gpufleet serve exited:\n${log}`);
    else await sleep(50);
  }
  if (!url) throw new Error(`gpufleet serve did not start:\n${log}`);
  return {
    url,
    tokens,
    credentials,
    log: () => log,
    async stop() {
      child.kill("SIGTERM");
      for (let i = 0; i < 100 && child.exitCode === null; i++) await sleep(50);
      if (child.exitCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// The API as `token`: the parsed answer, or a thrown Error with the status and body.
export async function call(server, token, method, path, body) {
  const r = await fetch(server.url + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

// Polls `fn` until it returns a truthy value (a real server on a sped-up clock), or fails.
export async function eventually(what, fn, { timeoutMs = 30000 } = {}) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ""}`);
}
