// What the console's end-to-end tests share: a real `gpufleet serve` on a free loopback port
// with an auth file of fresh tokens, the API as one of them, and Debian's Chromium through
// playwright-core (docs/console.md "Tests in a real browser").
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const BINARY = process.env.GPUFLEET_BINARY || join(ROOT, "build/gpufleet");
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
// Screenshots of each page: test artifacts (and, with GPUFLEET_DOCS_SCREENSHOTS=1, docs/console/).
export const ARTIFACTS = process.env.GPUFLEET_E2E_ARTIFACTS || join(dirname(BINARY), "e2e-artifacts");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// identities: {name: roles[]} → tokens {name: "gf_…"}.
export async function startServer({ identities, simSpeed = 120, simCloud, extraArgs = [] }) {
  const dir = mkdtempSync(join(tmpdir(), "gpufleet-e2e-"));
  const tokens = {};
  const entries = Object.entries(identities).map(([subject, roles]) => {
    const token = `gf_e2e_${subject}_${randomBytes(16).toString("hex")}`;
    tokens[subject] = token;
    const sha256 = createHash("sha256").update(token).digest("hex");
    return `  - { sha256: ${sha256}, subject: ${subject}, roles: [${roles.map((r) => JSON.stringify(r)).join(", ")}] }`;
  });
  writeFileSync(join(dir, "auth.yaml"), `tokens:\n${entries.join("\n")}\n`);
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

export async function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"] });
}

// A page at 1280x800 that records console errors and uncaught exceptions.
export async function newPage(browser, { colorScheme = "light" } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme });
  const page = await context.newPage();
  page.errors = [];
  page.on("console", (m) => m.type() === "error" && page.errors.push(m.text()));
  page.on("pageerror", (e) => page.errors.push(String(e)));
  return page;
}

export async function signIn(page, server, who) {
  await page.goto(server.url + "/");
  await page.getByLabel("API token").fill(server.tokens[who]);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator(".who").getByText(who).waitFor();
}

export async function screenshot(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.locator(".live.live").waitFor({ timeout: 10000 }).catch(() => {});
  const file = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  if (process.env.GPUFLEET_DOCS_SCREENSHOTS === "1") {
    mkdirSync(join(ROOT, "docs/console"), { recursive: true });
    writeFileSync(join(ROOT, "docs/console", `${name}.png`), readFileSync(file));
  }
  return file;
}
