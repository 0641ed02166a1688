// What the console's end-to-end tests share besides the server (tests/support/serve.mjs): Debian's
// Chromium through playwright-core, pages, sign-in and screenshots (docs/console.md "Tests in a
// real browser").
import { mkdirSync, writeFileSync, readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { chromium } from "playwright-core";
import { ROOT, BINARY } from "../support/serve.mjs";

export { ROOT, BINARY, startServer, call, eventually, sleep } from "../support/serve.mjs";
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
// Screenshots of each page: test artifacts (and, with GPUFLEET_DOCS_SCREENSHOTS=1, docs/console/).
export const ARTIFACTS = process.env.GPUFLEET_E2E_ARTIFACTS || join(dirname(BINARY), "e2e-artifacts");

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
