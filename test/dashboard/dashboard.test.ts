// The dashboard in headless Chromium (test/helpers/browser.ts, driven by playwright-core) against a real
// `fleetq dev`: the page loads with the token from the address, shows the demo's queue tree,
// clusters and fair-share bars, updates live when a job is submitted, and asks for a token when it
// has none or a bad one. Screenshots go to test-results/ (gitignored).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CHROMIUM_ARGS, chromiumExecutable } from "../helpers/browser.js";
import { deleteTestKeys } from "../helpers/redis.js";
import { ROOT, runCli } from "../cli/run-cli.js";
import { testRedisPrefix } from "../helpers/redis.js";
import { type DevProcess, startDevProcess } from "../e2e/dev-process.js";

const SCREENSHOTS = path.join(ROOT, "test-results");
const DEMO_QUEUES = ["acme", "research", "vision", "llm", "product", "search", "ads"];

let dev: DevProcess;
let browser: BrowserContext;
const stateDir = mkdtempSync(path.join(tmpdir(), "fleetq-dashboard-state-"));
const userDataDir = mkdtempSync(path.join(tmpdir(), "fleetq-chromium-"));
const prefix = testRedisPrefix("fleetq-dashboard");

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  dev = await startDevProcess([process.execPath, path.join(ROOT, "bin/fleetq.mjs"), "dev", "--port", "0"], {
    cwd: ROOT,
    env: {
      ...(process.env as Record<string, string>),
      FLEETQ_STATE_DIR: stateDir,
      FLEETQ_REDIS_PREFIX: prefix,
      FLEETQ_BIND_QUEUE_PREFIX: `${prefix}bind`,
    },
  });
  browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: await chromiumExecutable(),
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: CHROMIUM_ARGS,
  });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  rmSync(userDataDir, { recursive: true, force: true });
  rmSync(stateDir, { recursive: true, force: true });
  await deleteTestKeys(prefix);
});

const rowText = (page: Page, queue: string) => page.locator(`tr[data-queue="${queue}"]`).innerText();

it("shows the demo's queues, clusters and fair share, and updates live when a job is submitted", async () => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${dev.baseUrl}/#token=${dev.viewerToken}`); // the link `fleetq dev` prints

  // the queue tree, in tree order, with a bar column per cluster and the total
  for (const q of DEMO_QUEUES) await page.locator(`tr[data-queue="${q}"]`).waitFor({ timeout: 60_000 });
  const order = await page
    .locator("tr[data-queue]")
    .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-queue")));
  expect(order).toEqual(["acme", "product", "ads", "search", "research", "llm", "vision"]);
  const headers = await page.locator("table.queues th").allInnerTexts();
  expect(headers).toEqual(
    expect.arrayContaining(["Total (alloc / fair / deserved)", "a100-small", "cpu-heavy", "h100-l4-mixed"]),
  );
  // deserved GPUs of vision (8) show in its captions: allocated / fair share / deserved
  expect(await rowText(page, "vision")).toMatch(/0 \/ [\d.]+ \/ 8/);
  for (const c of ["a100-small", "h100-l4-mixed", "cpu-heavy"]) {
    await expect
      .poll(() => page.locator(`[data-cluster="${c}"]`).innerText(), { timeout: 60_000 })
      .toContain("READY");
  }
  await expect.poll(() => page.locator("[data-testid=status]").innerText(), { timeout: 60_000 }).toBe("live");
  expect(page.url()).not.toContain("token="); // the token left the address bar
  await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard.png"), fullPage: true });

  // a job submitted from the CLI appears without a reload, and vision's allocation moves
  const loadsBefore = await page.evaluate<string>("document.body.dataset.loadedAt");
  const submitted = await runCli(["submit", "examples/jobs/vision-train.yaml"], {
    url: dev.baseUrl,
    token: dev.memberToken,
  });
  expect(submitted.code, submitted.stderr).toBe(0);
  const id = submitted.stdout.trim();
  await page.locator(`tr[data-job-id="${id}"]`).first().waitFor({ timeout: 120_000 });
  await expect
    .poll(() => page.locator("[data-testid=running]").innerText(), { timeout: 120_000 })
    .toContain("vision-train");
  await expect.poll(() => rowText(page, "vision"), { timeout: 120_000 }).toMatch(/4 \/ [\d.]+ \/ 8/);
  await expect
    .poll(() => page.locator("#events").innerText(), { timeout: 60_000 })
    .toContain("job.submitted");
  // reloaded by the subscription, not by navigating: the same document
  expect(await page.evaluate<string>("document.body.dataset.loadedAt")).not.toBe(loadsBefore);
  expect(await page.evaluate<number>('performance.getEntriesByType("navigation").length')).toBe(1);
  // a job that cannot fit shows up as pending, with the scheduler's reason per cluster
  const tooBig = path.join(stateDir, "too-big.yaml");
  writeFileSync(
    tooBig,
    'name: too-big\nqueue: llm\nlabels: [{ key: pipeline, value: "42" }]\ntasks:\n  - name: w\n    replicas: 1\n    resources: { cpu: "1", memory: 1Gi, gpu: 64 }\n',
  );
  const pendingJob = await runCli(["submit", tooBig], { url: dev.baseUrl, token: dev.memberToken });
  expect(pendingJob.code, pendingJob.stderr).toBe(0);
  const pendingRow = page.locator(`[data-testid=pending] tr[data-job-id="${pendingJob.stdout.trim()}"]`);
  await pendingRow.waitFor({ timeout: 120_000 });
  await expect.poll(() => pendingRow.innerText(), { timeout: 120_000 }).toMatch(/a100-small: .+/);
  // with its labels under its name
  expect(await pendingRow.locator(".label").allInnerTexts()).toEqual(["pipeline=42"]);
  // its expected start: none for a job no cluster can run
  expect(await page.locator("[data-testid=pending] thead").innerText()).toContain("Expected start");
  expect(await pendingRow.locator("td.starts").innerText()).toBe("unknown");
  // the demo's cluster as a scenario file that simulate runs, and a what-if on it (ADMIN)
  const admin = { url: dev.baseUrl, token: dev.adminToken };
  const exported = path.join(stateDir, "a100-small.json");
  const ex = await runCli(["snapshot", "export", "--cluster", "a100-small", "-o", exported], admin);
  expect(ex.code, ex.stderr).toBe(0);
  const sim = await runCli(["simulate", exported]);
  expect(sim.code, sim.stderr).toBe(0);
  const whatif = await runCli(["whatif", "--cluster", "a100-small", "--set-quota", "llm:gpu=32:64"], admin);
  expect(whatif.code, whatif.stderr).toBe(0);
  expect(whatif.stdout).toMatch(/llm\s+\S+ -> 32/);
  await page.selectOption("[data-testid=resource]", "cpu");
  await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-live.png"), fullPage: true });
  expect(errors).toEqual([]);
  await page.close();
}, 600_000);

it("asks for a token, refuses a bad one, and keeps a good one", async () => {
  const page = await browser.newPage();
  await page.goto(`${dev.baseUrl}/`);
  await page.evaluate("localStorage.clear()");
  await page.reload();
  await page.locator("[data-testid=login]").waitFor({ state: "visible" });
  await page.fill("#token", "fq_not_a_token");
  await page.click("#login-form button");
  await expect.poll(() => page.locator("#login-error").innerText(), { timeout: 60_000 }).toContain("refused");
  await page.fill("#token", dev.memberToken);
  await page.click("#login-form button");
  await page.locator('tr[data-queue="acme"]').waitFor({ timeout: 60_000 });
  expect(await page.locator("#who").innerText()).toBe("demo-member (MEMBER)");
  // kept in localStorage: a new visit is signed in
  await page.reload();
  await page.locator('tr[data-queue="acme"]').waitFor({ timeout: 60_000 });
  await page.close();
}, 300_000);
