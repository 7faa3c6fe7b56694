// The dashboard in headless Chromium (test/helpers/browser.ts, driven by playwright-core) against a real
// `fleetq dev`: the page loads with the token from the address, shows the demo's queue tree,
// clusters and fair-share bars, updates live when a job is submitted, opens a job's page from the
// job tables (pods, timeline, expected start, logs, cancel), charts a queue's fair share over time
// from the workers' samples and GPU-hours per queue (per cluster for a VIEWER) from hourly rollups,
// and asks for a token when it has none or a bad one. Screenshots go to test-results/ (gitignored).
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
import { gql } from "../helpers/api.js";
import { createTestDatabase, type TestDatabase } from "../helpers/db.js";
import { createStore, openDatabase, recordQueueShares, seedUsageRollups } from "../../src/store/index.js";

const SCREENSHOTS = path.join(ROOT, "test-results");
const DEMO_QUEUES = ["acme", "research", "vision", "llm", "product", "search", "ads"];

let dev: DevProcess;
let db: TestDatabase;
let browser: BrowserContext;
const stateDir = mkdtempSync(path.join(tmpdir(), "fleetq-dashboard-state-"));
const userDataDir = mkdtempSync(path.join(tmpdir(), "fleetq-chromium-"));
const prefix = testRedisPrefix("fleetq-dashboard");

const HOUR_MS = 3_600_000;
/** Queues and clusters with GPU-hours in the 30 days before the current hour. */
const USAGE_QUEUES = ["vision", "llm", "search", "ads"];
const USAGE_CLUSTERS = ["a100-small", "h100-l4-mixed"];

/** Hourly rollups of whole past hours (the workers roll up only hours they sampled wholly): from
 * the UTC midnight 29 days ago up to the current hour. */
async function seedUsage(url: string) {
  const database = await openDatabase(url);
  try {
    const from = new Date(Math.floor(Date.now() / (24 * HOUR_MS)) * 24 * HOUR_MS - 29 * 24 * HOUR_MS);
    const hours = Math.floor((Date.now() - from.getTime()) / HOUR_MS);
    await seedUsageRollups(createStore(database), {
      queues: USAGE_QUEUES,
      clusters: USAGE_CLUSTERS,
      from,
      hours,
    });
  } finally {
    await database.close();
  }
}

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  db = await createTestDatabase();
  await seedUsage(db.url);
  dev = await startDevProcess([process.execPath, path.join(ROOT, "bin/fleetq.mjs"), "dev", "--port", "0"], {
    cwd: ROOT,
    env: {
      ...(process.env as Record<string, string>),
      FLEETQ_STATE_DIR: stateDir,
      // PostgreSQL rather than the embedded database: the test writes usage rollups into it.
      DATABASE_URL: db.url,
      FLEETQ_REDIS_PREFIX: prefix,
      FLEETQ_BIND_QUEUE_PREFIX: `${prefix}bind`,
      // Samples for the fair-share chart from the start (one per minute is kept).
      FLEETQ_USAGE_INTERVAL_MS: "5000",
    },
  });
  browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: await chromiumExecutable(),
    headless: true,
    viewport: { width: 1400, height: 1000 },
    // A browser's own language: left to the environment, navigator.language follows LANG (C.UTF-8
    // gives "en-US@posix", which Intl, and so the charts, refuse).
    locale: "en-US",
    args: CHROMIUM_ARGS,
  });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  await db?.drop();
  rmSync(userDataDir, { recursive: true, force: true });
  rmSync(stateDir, { recursive: true, force: true });
  await deleteTestKeys(prefix);
});

const rowText = (page: Page, queue: string) => page.locator(`tr[data-queue="${queue}"]`).innerText();
/** A new tab on the dashboard signed in with `token` (the link `fleetq dev` prints); `errors`
 * collects the page's uncaught errors. */
async function openDashboard(token: string) {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${dev.baseUrl}/#token=${token}`);
  return { page, errors };
}

/** The job that cannot fit (pending), submitted by the first test. */
let pendingId = "";

it("shows the demo's queues, clusters and fair share, and updates live when a job is submitted", async () => {
  const { page, errors } = await openDashboard(dev.viewerToken);

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
  pendingId = pendingJob.stdout.trim();
  const pendingRow = page.locator(`[data-testid=pending] tr[data-job-id="${pendingId}"]`);
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

/** A job's page: its section `name` (job-pods, job-timeline, …). */
const section = (page: Page, name: string) => page.locator(`[data-testid=${name}]`);
const fact = (page: Page, key: string) => page.locator(`[data-fact=${key}] dd`).innerText();

it("opens a job's page from the job tables: pods, timeline, expected start, logs, and cancels it", async () => {
  const spec = path.join(stateDir, "page-job.yaml");
  writeFileSync(
    spec,
    [
      "name: page-job",
      "queue: vision",
      "cluster: a100-small",
      "tasks:",
      "  - name: trainer",
      "    replicas: 2",
      '    resources: { cpu: "2", memory: 8Gi, gpu: 1 }',
      "    durationSeconds: 3600",
      "    template:",
      "      spec:",
      "        restartPolicy: Never",
      '        containers: [{ name: trainer, image: busybox, command: ["python", "train.py", "--epochs", "3", "--note", "<img src=x>"] }]',
      "",
    ].join("\n"),
  );
  const submitted = await runCli(["submit", spec], { url: dev.baseUrl, token: dev.memberToken });
  expect(submitted.code, submitted.stderr).toBe(0);
  const id = submitted.stdout.trim();
  const { page, errors } = await openDashboard(dev.memberToken);

  // a pending job's page, from the pending table: when it may start and why it waits
  await page.locator(`[data-testid=pending] tr[data-job-id="${pendingId}"] a.job-link`).click();
  await section(page, "job-page").waitFor({ state: "visible" });
  expect(page.url()).toContain(`#job=${pendingId}`);
  await expect.poll(() => page.locator("#job-title").innerText(), { timeout: 60_000 }).toBe("too-big");
  expect(await page.locator("#content").isHidden()).toBe(true);
  const estimate = section(page, "job-estimate");
  expect(await estimate.locator(".estimate").innerText()).toBe("Expected to start: unknown");
  expect(await estimate.locator(".short").allInnerTexts()).toEqual(
    expect.arrayContaining([expect.stringMatching(/^a100-small: .+/)]),
  );
  expect(await fact(page, "state")).toBe("PENDING");
  await page.locator("[data-testid=job-back]").click();
  await page.locator("#content").waitFor({ state: "visible" });

  // the running job's page, from the running table
  const link = page.locator(`[data-testid=running] tr[data-job-id="${id}"] a.job-link`);
  await link.waitFor({ timeout: 120_000 });
  expect(await link.innerText()).toBe("page-job");
  await link.click();
  await expect.poll(() => page.locator("#job-title").innerText(), { timeout: 60_000 }).toBe("page-job");
  expect(await page.locator("#job-id").innerText()).toBe(id);
  expect(await fact(page, "queue")).toBe("vision");
  expect(await fact(page, "cluster")).toBe("a100-small");
  // tasks and pods: each pod on a node with its GPU, running
  const pods = section(page, "job-pods");
  expect(await pods.locator("tr[data-task=trainer]").innerText()).toMatch(/trainer\s+2\s+1/);
  await expect
    .poll(() => pods.locator("tr[data-pod] .pod-state").allInnerTexts(), { timeout: 120_000 })
    .toEqual(["RUNNING", "RUNNING"]);
  expect(await pods.locator("table.pods thead").innerText()).toMatch(
    /Pod\s+Task\s+State\s+Node\s+GPUs\s+Started/,
  );
  for (const node of await pods.locator("tr[data-pod] .pod-node").allInnerTexts()) expect(node).not.toBe("-");
  const podNames = await pods
    .locator("tr[data-pod]")
    .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-pod")));
  expect(podNames).toHaveLength(2);
  // its events along the timeline, oldest first
  const kinds = () =>
    section(page, "job-timeline")
      .locator("li")
      .evaluateAll((items) => items.map((i) => i.getAttribute("data-kind")));
  await expect
    .poll(kinds, { timeout: 60_000 })
    .toEqual(expect.arrayContaining(["job.submitted", "job.admitted", "job.running"]));
  expect((await kinds())[0]).toBe("job.submitted");
  expect(await section(page, "job-timeline").locator("li").first().innerText()).toContain("by demo-member");
  expect(await section(page, "job-estimate").locator(".estimate").innerText()).toMatch(/^Started /);
  // the log of the pod picked
  expect(await section(page, "log-pod").locator("option").allInnerTexts()).toEqual(podNames);
  await page.selectOption("[data-testid=log-pod]", podNames[1]!);
  // Each click reads the log once; a busy agent may not answer in time (the error shows): again.
  const logView = async () => {
    const text = await section(page, "log-text").innerText();
    const error = await section(page, "job-logs").locator(".error").innerText();
    if (!text.includes("python") && text !== "loading…") await page.click("[data-testid=log-show]");
    return `${text}${error ? ` (${error})` : ""}`;
  };
  await expect.poll(logView, { timeout: 90_000, interval: 3_000 }).toContain("python train.py --epochs 3");
  // the log is text: markup in it is shown, not made into elements
  expect(await section(page, "log-text").innerText()).toContain("<img src=x>");
  expect(await section(page, "log-text").locator("img").count()).toBe(0);
  expect(await section(page, "log-text").getAttribute("data-pod")).toBe(podNames[1]);
  const cancel = section(page, "job-cancel");
  expect(await cancel.isVisible()).toBe(true);
  expect(await cancel.isEnabled()).toBe(true);
  await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-job.png"), fullPage: true });

  // a VIEWER sees the page without the cancel button or the logs; the API refuses it anyway
  const viewer = await browser.newPage();
  await viewer.goto(`${dev.baseUrl}/#token=${dev.viewerToken}&job=${id}`);
  await expect.poll(() => viewer.locator("#job-title").innerText(), { timeout: 60_000 }).toBe("page-job");
  await expect.poll(() => section(viewer, "job-logs").innerText()).toContain("Logs are shown to ADMIN");
  expect(await section(viewer, "job-cancel").isHidden()).toBe(true);
  expect(await section(viewer, "log-pod").count()).toBe(0);
  const refused = await gql(
    `${dev.baseUrl}/graphql`,
    dev.viewerToken,
    "mutation($id: ID!) { cancelJob(id: $id) { state } }",
    { id },
  );
  expect(refused.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  await viewer.close();

  // cancelled from its page: the state changes there, the button is spent
  page.once("dialog", (d) => void d.accept());
  await cancel.click();
  await expect.poll(() => fact(page, "state"), { timeout: 60_000 }).toBe("CANCELLED");
  expect(await cancel.isDisabled()).toBe(true);
  await expect.poll(kinds, { timeout: 60_000 }).toContain("job.cancelled");
  await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-job-cancelled.png"), fullPage: true });
  expect(errors).toEqual([]);
  await page.close();
}, 600_000);

/** A query of the test's own with `token`, which the dashboard's tabs share: while their loads have
 * spent its budget (RATE_LIMITED), again once the API says it is refilled. */
async function gqlWhenAllowed<T>(token: string, query: string, variables: Record<string, unknown> = {}) {
  for (let attempt = 1; ; attempt++) {
    const r = await gql<T>(`${dev.baseUrl}/graphql`, token, query, variables);
    const limited = r.errors?.[0]?.extensions as { code?: string; retryAfter?: number } | undefined;
    if (limited?.code !== "RATE_LIMITED" || attempt === 5) return r;
    await new Promise((done) => setTimeout(done, (limited.retryAfter ?? 1) * 1000));
  }
}

/** A sample of `queue` on `cluster` in the minute two minutes ago, as a worker writes it, of
 * nothing at all: a point the workers' samples cannot be mistaken for. */
async function seedEarlierShareSample(queue: string, cluster: string) {
  const database = await openDatabase(db.url);
  try {
    const none = { gpu: 0, cpuMillis: 0, memory: 0 };
    await recordQueueShares(createStore(database), {
      cluster,
      at: new Date(Date.now() - 120_000),
      queues: [{ queue, deserved: none, fairShare: none, allocated: none }],
    });
  } finally {
    await database.close();
  }
}

it("charts a queue's allocation, fair share and deserved share on a cluster from the workers' samples", async () => {
  // The workers keep a sample a minute: an earlier minute's is written here, so the chart has two
  // points as soon as the workers have sampled the current minute, not a minute after the start.
  await seedEarlierShareSample("vision", "a100-small");
  const { page, errors } = await openDashboard(dev.viewerToken);
  await page
    .locator('[data-testid=history-queue] option[value="vision"]')
    .waitFor({ state: "attached", timeout: 60_000 });
  await page.selectOption("[data-testid=history-queue]", "vision");
  const chart = section(page, "share-chart");
  const drawn = () =>
    page.evaluate<number[]>(
      'Array.from(document.querySelector("[data-testid=share-chart]").chart?.data[3] ?? [])',
    );
  // the last point drawn is the workers' sample: vision's deserved GPUs there, as fairShare gives
  // them now (choosing the cluster again loads the history again)
  await expect
    .poll(
      async () => {
        await page.selectOption("[data-testid=history-cluster]", "a100-small");
        const shares = await gqlWhenAllowed<{ fairShare: { queue: string; deserved: { gpu: number } }[] }>(
          dev.viewerToken,
          'query { fairShare(cluster: "a100-small") { queue deserved { gpu } } }',
        );
        const deserved = shares.data!.fairShare.find((r) => r.queue === "vision")!.deserved.gpu;
        const points = await drawn();
        return { points: points.length >= 2, last: points.at(-1) === deserved };
      },
      { timeout: 150_000, interval: 2_000 },
    )
    .toEqual({ points: true, last: true });
  expect(Number(await chart.getAttribute("data-points"))).toBeGreaterThanOrEqual(2);
  expect(await chart.getAttribute("data-series")).toBe("allocated,fair share,deserved");
  expect(await chart.locator("canvas").count()).toBeGreaterThanOrEqual(1);
  const legend = await chart.locator(".u-legend .u-series").allInnerTexts();
  for (const label of ["allocated", "fair share", "deserved"])
    expect(
      legend.some((l) => l.includes(label)),
      label,
    ).toBe(true);
  await page.selectOption("[data-testid=history-range]", "week");
  await expect.poll(() => chart.locator("canvas").count()).toBeGreaterThanOrEqual(1);
  await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-chart.png"), fullPage: true });
  expect(errors).toEqual([]);
  await page.close();
}, 300_000);

/** The GPU-hours chart's drawn series (uPlot's data: times, then one array per series). */
const drawnUsage = (page: Page) =>
  page.evaluate<number[][]>(
    'Array.from(document.querySelector("[data-testid=gpu-hours-chart]").chart.data, (a) => Array.from(a))',
  );

interface UsageRowOut {
  queue: string | null;
  cluster: string | null;
  periodStart: string;
  allocated: { gpuHours: number };
}

/** The API's allocated GPU-hours per group and period start (epoch s): the last 2 days by hour, or
 * the last 31 by day. */
async function reportedUsage(token: string, groupBy: string[], step: "HOUR" | "DAY") {
  const to = new Date((Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000);
  const from = new Date(to.getTime() - (step === "HOUR" ? 2 : 31) * 86_400_000);
  const r = await gqlWhenAllowed<{ usageReport: UsageRowOut[] }>(
    token,
    "query($from: String!, $to: String!, $groupBy: [UsageGroup!]!, $step: UsageStep) { usageReport(from: $from, to: $to, groupBy: $groupBy, step: $step) { queue cluster periodStart allocated { gpuHours } } }",
    { from: from.toISOString(), to: to.toISOString(), groupBy, step },
  );
  expect(r.errors).toBeUndefined();
  const out = new Map<string, number>();
  for (const row of r.data!.usageReport)
    out.set(
      `${row.queue ?? row.cluster ?? "fleet"} ${Date.parse(row.periodStart) / 1000}`,
      row.allocated.gpuHours,
    );
  return out;
}

/** Every drawn point equals the API's figure for its group and period (none: 0). */
async function expectDrawnAsReported(page: Page, series: string[], reported: Map<string, number>) {
  const [times, ...values] = await drawnUsage(page);
  expect(values).toHaveLength(series.length);
  series.forEach((name, i) => {
    expect(values[i], name).toEqual(times!.map((t) => reported.get(`${name} ${t}`) ?? 0));
    expect(Math.max(...values[i]!), name).toBeGreaterThan(0);
  });
}

it("charts GPU-hours per queue from the hourly rollups for an ADMIN, per cluster or in total for a VIEWER", async () => {
  const { page, errors } = await openDashboard(dev.adminToken);
  const chart = section(page, "gpu-hours-chart");
  // the last day by hour: the 23 whole hours before the current one (a 24th once it is rolled up)
  await expect
    .poll(() => chart.getAttribute("data-series"), { timeout: 60_000 })
    .toBe("ads,llm,search,vision");
  expect(Number(await chart.getAttribute("data-points"))).toBeGreaterThanOrEqual(23);
  expect(Number(await chart.getAttribute("data-points"))).toBeLessThanOrEqual(24);
  await expectDrawnAsReported(
    page,
    [...USAGE_QUEUES].sort(),
    await reportedUsage(dev.adminToken, ["QUEUE"], "HOUR"),
  );
  const legend = await chart.locator(".u-legend .u-series").allInnerTexts();
  for (const q of USAGE_QUEUES) expect(legend.some((l) => l.includes(q))).toBe(true);
  // with the hours used beside those allocated
  await page.check("[data-testid=gpu-hours-used]");
  expect(await chart.getAttribute("data-series")).toBe(
    "ads,ads used,llm,llm used,search,search used,vision,vision used",
  );
  await page.screenshot({ path: path.join(SCREENSHOTS, "dashboard-gpu-hours.png"), fullPage: true });
  await page.uncheck("[data-testid=gpu-hours-used]");
  // the last month by day: 30 days (29 in the first hour of a UTC day: it has no whole hour yet)
  await page.selectOption("[data-testid=gpu-hours-range]", "month");
  await expect
    .poll(async () => Number(await chart.getAttribute("data-points")), { timeout: 60_000 })
    .toBeGreaterThanOrEqual(29);
  expect(Number(await chart.getAttribute("data-points"))).toBeLessThanOrEqual(30);
  await expectDrawnAsReported(
    page,
    [...USAGE_QUEUES].sort(),
    await reportedUsage(dev.adminToken, ["QUEUE"], "DAY"),
  );
  expect(errors).toEqual([]);
  await page.close();

  // a VIEWER: no per-queue choice (the API refuses it), per cluster or the fleet's total
  const viewer = await openDashboard(dev.viewerToken);
  const vchart = section(viewer.page, "gpu-hours-chart");
  await expect
    .poll(() => vchart.getAttribute("data-series"), { timeout: 60_000 })
    .toBe("a100-small,h100-l4-mixed");
  expect(await viewer.page.locator('[data-testid=gpu-hours-by] option[value="QUEUE"]').isDisabled()).toBe(
    true,
  );
  await expectDrawnAsReported(
    viewer.page,
    USAGE_CLUSTERS,
    await reportedUsage(dev.viewerToken, ["CLUSTER"], "HOUR"),
  );
  await vchart.scrollIntoViewIfNeeded();
  await viewer.page.screenshot({
    path: path.join(SCREENSHOTS, "dashboard-gpu-hours-viewer.png"),
    fullPage: true,
  });
  await viewer.page.selectOption("[data-testid=gpu-hours-by]", "TOTAL");
  await expect.poll(() => vchart.getAttribute("data-series"), { timeout: 60_000 }).toBe("fleet");
  await expectDrawnAsReported(viewer.page, ["fleet"], await reportedUsage(dev.viewerToken, [], "HOUR"));
  const refused = await gqlWhenAllowed(
    dev.viewerToken,
    'query { usageReport(from: "2026-01-01", to: "2026-01-02", groupBy: [QUEUE]) { queue } }',
  );
  expect(refused.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
  expect(viewer.errors).toEqual([]);
  await viewer.page.close();
}, 300_000);

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
