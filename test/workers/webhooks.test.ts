// Webhooks end to end: the real API over HTTP, the workers, a simulated cluster and its agent, and
// HTTP receivers on 127.0.0.1 (so the webhooks that deliver are an ADMIN's, with private targets
// allowed). Signed deliveries of the jobs a webhook selects, exactly once; a retry after a 500;
// redirects not followed; a webhook disabled after failed deliveries in a row, with its event;
// a job past its estimated start; and what a MEMBER may do.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookSignatureProblem } from "../../src/webhooks/signature.js";
import { metrics } from "../../workers/index.js";
import { until } from "../agent/until.js";
import { gql, gqlOk } from "../helpers/api.js";
import { countRows } from "../helpers/db.js";
import { WebhookReceiver } from "../helpers/webhook-receiver.js";
import { ControlPlane, gpuJob, TWO_NODES_OF_FOUR_GPUS } from "./harness.js";

let cp: ControlPlane;
let member: string;
let viewer: string;
const receivers: WebhookReceiver[] = [];

const receiver = async (...answers: { status: number; headers?: Record<string, string> }[]) => {
  const r = await WebhookReceiver.start(answers.length ? answers : undefined);
  receivers.push(r);
  return r;
};

beforeAll(async () => {
  cp = await ControlPlane.start();
  for (const [q, parent] of [
    ["org", undefined],
    ["team-a", "org"],
    ["team-b", "org"],
    ["team-c", "org"],
    ["team-d", "org"],
  ] as const)
    await cp.createQueue(q, parent);
  await cp.addCluster("c1", TWO_NODES_OF_FOUR_GPUS);
  const token = async (name: string, role: string, queues?: string[]) =>
    (
      await cp.admin<{ createToken: { secret: string } }>(
        "mutation($i: CreateTokenInput!) { createToken(input: $i) { secret } }",
        { i: { name, role, queues } },
      )
    ).createToken.secret;
  member = await token("team-a-ci", "MEMBER", ["team-a"]);
  viewer = await token("watcher", "VIEWER");
  await cp.startWorkers({
    webhookIntervalMs: 300,
    webhookAttempts: 3,
    webhookBackoffMs: 200,
    webhookDisableAfter: 2,
    webhookEstimateGraceMs: 2000,
    estimateIntervalMs: 300,
    estimateMinGapMs: 0,
    publicUrl: "https://fleetq.example.com",
  });
}, 180_000);
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await cp?.close();
});

const WEBHOOK_FIELDS =
  "id url events queues labels { key values } allowPrivateTargets enabled disabledReason consecutiveFailures secret createdBy";

interface WebhookView {
  id: string;
  url: string;
  events: string[];
  queues: string[];
  enabled: boolean;
  disabledReason: string | null;
  consecutiveFailures: number;
  secret: string | null;
  createdBy: string | null;
}

interface DeliveryView {
  id: string;
  event: string;
  job: string | null;
  state: string;
  attempts: number;
  responseCode: number | null;
  error: string | null;
  payload: Record<string, unknown>;
}

const CREATE = `mutation($i: WebhookInput!) { createWebhook(input: $i) { ${WEBHOOK_FIELDS} } }`;

async function adminWebhook(input: Record<string, unknown>): Promise<WebhookView> {
  const r = await cp.admin<{ createWebhook: WebhookView }>(CREATE, {
    i: { allowPrivateTargets: true, ...input },
  });
  return r.createWebhook;
}

async function deliveries(webhook: string): Promise<DeliveryView[]> {
  const r = await cp.admin<{ webhookDeliveries: DeliveryView[] }>(
    `query($w: ID!) { webhookDeliveries(webhook: $w) {
      id event job state attempts responseCode error payload } }`,
    { w: webhook },
  );
  return r.webhookDeliveries;
}

async function webhookOf(token: string, id: string): Promise<WebhookView | undefined> {
  const r = await gqlOk<{ webhooks: WebhookView[] }>(cp.api.url, token, `{ webhooks { ${WEBHOOK_FIELDS} } }`);
  return r.webhooks.find((w) => w.id === id);
}

const shortJob = (name: string, queue: string, extra: Record<string, unknown> = {}) => {
  const job = gpuJob(name, queue, 1, 1, extra);
  job.tasks[0]!.durationSeconds = 1;
  return job;
};

describe("deliveries", () => {
  it("sends a selected job's success once, signed with the secret shown at creation", async () => {
    const rx = await receiver();
    const hook = await adminWebhook({
      url: rx.url,
      events: ["JOB_SUCCEEDED"],
      queues: ["team-a"],
      labels: [{ key: "pipeline", values: ["nightly", "weekly"] }],
    });
    expect(hook.secret).toMatch(/^whsec_/);
    expect(hook).toMatchObject({ events: ["JOB_SUCCEEDED"], queues: ["team-a"], enabled: true });
    expect((await webhookOf(cp.api.adminToken, hook.id))?.secret).toBeNull();

    const picked = await cp.submit(
      shortJob("nightly-train", "team-a", { labels: [{ key: "pipeline", value: "nightly" }] }),
    );
    const unlabelled = await cp.submit(shortJob("adhoc", "team-a"));
    const otherQueue = await cp.submit(
      shortJob("b-nightly", "team-b", { labels: [{ key: "pipeline", value: "nightly" }] }),
    );
    for (const id of [picked, unlabelled, otherQueue]) await cp.jobInState(id, "SUCCEEDED");

    await until(() => expect(rx.requests).toHaveLength(1), 60_000);
    const [req] = rx.requests;
    const problem = webhookSignatureProblem({
      secret: hook.secret!,
      body: req!.body,
      timestamp: req!.headers["x-fleetq-timestamp"] as string,
      signature: req!.headers["x-fleetq-signature"] as string,
    });
    expect(problem).toBeNull();
    expect(
      webhookSignatureProblem({
        ...{ secret: "wrong", body: req!.body },
        timestamp: req!.headers["x-fleetq-timestamp"] as string,
        signature: req!.headers["x-fleetq-signature"] as string,
      }),
    ).toBe("signature does not match");
    const body = JSON.parse(req!.body);
    expect(body).toMatchObject({
      event: "job.succeeded",
      text: "[fleetq] job nightly-train (queue team-a, cluster c1) succeeded",
      queue: "team-a",
      cluster: "c1",
      link: `https://fleetq.example.com/#job=${picked}`,
      job: {
        id: picked,
        name: "nightly-train",
        queue: "team-a",
        cluster: "c1",
        state: "SUCCEEDED",
        labels: { pipeline: "nightly" },
      },
    });
    expect(Date.parse(body.job.finishedAt)).toBeGreaterThanOrEqual(Date.parse(body.job.startedAt));
    expect(req!.headers["x-fleetq-event"]).toBe("job.succeeded");

    const log = await until(async () => {
      const d = await deliveries(hook.id);
      expect(d.map((x) => [x.state, x.attempts, x.responseCode, x.job])).toEqual([
        ["SUCCEEDED", 1, 200, picked],
      ]);
      return d;
    });
    expect(req!.headers["x-fleetq-delivery"]).toBe(log[0]!.id);
    // Several task runs later, still one request: the event was fanned out once.
    await new Promise((r) => setTimeout(r, 1500));
    expect(rx.requests).toHaveLength(1);
  }, 120_000);

  it("tries again after a 500, with the same delivery and body, and then succeeds", async () => {
    const rx = await receiver({ status: 500 }, { status: 200 });
    const hook = await adminWebhook({ url: rx.url, events: ["JOB_FAILED"], queues: ["team-a"] });
    const job = await cp.submit(
      shortJob("breaks", "team-a", { tasks: [{ ...shortJob("x", "q").tasks[0], exitFailure: true }] }),
    );
    await cp.jobInState(job, "FAILED");
    await until(async () => {
      const d = await deliveries(hook.id);
      expect(d.map((x) => [x.state, x.attempts, x.responseCode, x.error])).toEqual([
        ["SUCCEEDED", 2, 200, null],
      ]);
    }, 60_000);
    expect(rx.requests).toHaveLength(2);
    const [first, second] = rx.requests;
    expect(second!.body).toBe(first!.body);
    expect(second!.headers["x-fleetq-delivery"]).toBe(first!.headers["x-fleetq-delivery"]);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(200);
    expect(JSON.parse(first!.body)).toMatchObject({ event: "job.failed", job: { id: job, state: "FAILED" } });
    expect(JSON.parse(first!.body).text).toMatch(
      /^\[fleetq\] job breaks \(queue team-a, cluster c1\) failed: /,
    );
  }, 120_000);

  it("does not follow a redirect: the delivery fails after its attempts, the redirect's target gets nothing", async () => {
    const elsewhere = await receiver();
    const rx = await receiver({ status: 307, headers: { location: elsewhere.url } });
    const hook = await adminWebhook({ url: rx.url, events: ["JOB_SUCCEEDED"], queues: ["team-c"] });
    await cp.jobInState(await cp.submit(shortJob("moved", "team-c")), "SUCCEEDED");
    await until(async () => {
      const d = await deliveries(hook.id);
      expect(d.map((x) => [x.state, x.attempts, x.responseCode, x.error])).toEqual([
        ["FAILED", 3, 307, `HTTP 307: redirect to ${elsewhere.url} not followed`],
      ]);
    }, 60_000);
    expect(rx.requests).toHaveLength(3);
    expect(elsewhere.requests).toEqual([]);
    await cp.admin("mutation($id: ID!) { deleteWebhook(id: $id) }", { id: hook.id });
  }, 120_000);

  it("disables a webhook after failed deliveries in a row, with an event; enabling starts afresh", async () => {
    const rx = await receiver({ status: 503 });
    const hook = await adminWebhook({ url: rx.url, events: ["JOB_SUCCEEDED"], queues: ["team-b"] });
    const jobs = [];
    for (const n of ["b1", "b2", "b3"]) jobs.push(await cp.submit(shortJob(n, "team-b")));
    for (const j of jobs) await cp.jobInState(j, "SUCCEEDED");
    const disabled = await until(async () => {
      const w = await webhookOf(cp.api.adminToken, hook.id);
      expect(w?.enabled).toBe(false);
      return w!;
    }, 60_000);
    expect(disabled.consecutiveFailures).toBe(2);
    expect(disabled.disabledReason).toBe("disabled after 2 failed deliveries in a row (last: HTTP 503)");
    const events = (await cp.events("webhook.disabled")).filter((e) => e.message.includes(hook.id));
    expect(events).toHaveLength(1);
    expect(events[0]!.message).toBe(
      `webhook ${hook.id} to ${new URL(rx.url).origin} disabled after 2 failed deliveries in a row (last: HTTP 503)`,
    );
    const log = await deliveries(hook.id);
    expect(log.filter((d) => d.state === "FAILED" && d.attempts === 3)).toHaveLength(2);
    const counted = await metrics.getSingleMetricAsString("fleetq_webhooks_disabled_total");
    expect(counted).toMatch(/^fleetq_webhooks_disabled_total [1-9]/m);
    expect(log.every((d) => d.state === "FAILED")).toBe(true);
    // Each failed delivery made all its attempts; nothing more is sent while disabled.
    const sent = rx.requests.length;
    expect(sent).toBeGreaterThanOrEqual(6);
    await cp.jobInState(await cp.submit(shortJob("b4", "team-b")), "SUCCEEDED");
    await new Promise((r) => setTimeout(r, 1500));
    expect(rx.requests.length).toBe(sent);

    rx.answer({ status: 200 });
    const enabled = await cp.admin<{ enableWebhook: WebhookView }>(
      `mutation($id: ID!) { enableWebhook(id: $id) { ${WEBHOOK_FIELDS} } }`,
      { id: hook.id },
    );
    expect(enabled.enableWebhook).toMatchObject({
      enabled: true,
      disabledReason: null,
      consecutiveFailures: 0,
    });
    expect((await cp.events("webhook.enabled")).some((e) => e.message.includes(hook.id))).toBe(true);
    const b5 = await cp.submit(shortJob("b5", "team-b"));
    await cp.jobInState(b5, "SUCCEEDED");
    await until(async () => {
      const d = await deliveries(hook.id);
      expect(d.find((x) => x.job === b5)).toMatchObject({ state: "SUCCEEDED", attempts: 1 });
    }, 60_000);
  }, 180_000);

  it("reports a job still pending past the start first estimated for it", async () => {
    const rx = await receiver();
    const hook = await adminWebhook({
      url: rx.url,
      events: ["JOB_WAITING_PAST_ESTIMATE"],
      queues: ["team-d"],
    });
    // It says it ends within a second, but runs for an hour: the job behind it waits past its estimate.
    const hog = await cp.submit(gpuJob("hog", "team-d", 2, 4, { expectedRuntimeSeconds: 1 }));
    await cp.jobInState(hog, "RUNNING");
    const waiter = await cp.submit(gpuJob("waiter", "team-d", 1, 4));
    // (The hog itself may have waited past its own first estimate on a busy machine: not asserted.)
    const forWaiter = () => rx.requests.filter((r) => JSON.parse(r.body).job.id === waiter);
    await until(() => expect(forWaiter()).toHaveLength(1), 60_000);
    const body = JSON.parse(forWaiter()[0]!.body);
    expect(body).toMatchObject({ event: "job.waiting_past_estimate", job: { id: waiter, state: "PENDING" } });
    expect(Date.parse(body.job.estimatedStart)).toBeLessThan(Date.now() - 2000);
    expect(body.text).toBe(
      `[fleetq] job waiter (queue team-d) still pending past its estimated start ${body.job.estimatedStart}`,
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(forWaiter()).toHaveLength(1);
    await cp.admin("mutation($id: ID!) { deleteWebhook(id: $id) }", { id: hook.id });
    for (const id of [waiter, hog])
      await cp.admin("mutation($id: ID!) { cancelJob(id: $id) { id } }", { id });
  }, 180_000);
});

describe("who may do what", () => {
  const asMember = (query: string, variables: Record<string, unknown> = {}) =>
    gql(cp.api.url, member, query, variables);

  it("refuses private and loopback targets unless an ADMIN allows them, and schemes other than http(s)", async () => {
    const rx = await receiver();
    for (const [token, url] of [
      [member, rx.url],
      [cp.api.adminToken, rx.url],
      [member, "http://10.0.0.7/hook"],
      [member, "http://169.254.169.254/latest/meta-data"],
      [member, "http://[::1]:8080/"],
      [member, "http://[fd00::1]/"],
    ] as const) {
      const r = await gql(cp.api.url, token, CREATE, {
        i: { url, events: ["JOB_FAILED"], queues: ["team-a"] },
      });
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.url" });
      expect(r.errors?.[0]?.message).toMatch(
        /^input\.url: .* resolves to .*, a (loopback|private|link-local|unique-local) address/,
      );
    }
    for (const url of ["ftp://example.com/hook", "file:///etc/passwd", "javascript:alert(1)"]) {
      const r = await asMember(CREATE, { i: { url, events: ["JOB_FAILED"], queues: ["team-a"] } });
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "input.url" });
      expect(r.errors?.[0]?.message).toMatch(/scheme must be http or https/);
    }
    const allowed = await asMember(CREATE, {
      i: { url: rx.url, events: ["JOB_FAILED"], queues: ["team-a"], allowPrivateTargets: true },
    });
    expect(allowed.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(allowed.errors?.[0]?.message).toMatch(/may not allow private targets: ADMIN only/);
    expect(await countRows(cp.api.db.url, "webhook", "url = $1", [rx.url])).toBe(0);
  });

  it("a MEMBER registers webhooks within its subtrees only, and sees and manages only those", async () => {
    const outside = await asMember(CREATE, {
      i: { url: "http://192.0.2.10/hook", events: ["JOB_RESTARTED"], queues: ["team-b"] },
    });
    expect(outside.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(outside.errors?.[0]?.message).toMatch(/queues\[0\].*team-a and below, not team-b/);
    const everything = await asMember(CREATE, {
      i: { url: "http://192.0.2.10/hook", events: ["JOB_RESTARTED"] },
    });
    expect(everything.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      field: "input.queues",
    });

    const own = await asMember(CREATE, {
      i: { url: "http://192.0.2.10/hook", events: ["JOB_RESTARTED"], queues: ["team-a"] },
    });
    const created = (own.data as { createWebhook: WebhookView }).createWebhook;
    expect(created).toMatchObject({ queues: ["team-a"], createdBy: "team-a-ci", allowPrivateTargets: false });
    expect(created.secret).toMatch(/^whsec_/);

    const adminHook = await adminWebhook({ url: "http://192.0.2.11/hook", events: ["CLUSTER_LOST"] });
    const seen = await gqlOk<{ webhooks: WebhookView[] }>(
      cp.api.url,
      member,
      "{ webhooks { id queues secret } }",
    );
    // Its own, and the ADMIN's of team-a (its subtree); not the ADMIN's of every queue.
    expect(seen.webhooks.map((w) => w.id)).toContain(created.id);
    expect(seen.webhooks.map((w) => w.id)).not.toContain(adminHook.id);
    expect(seen.webhooks.every((w) => w.queues.length && w.queues.every((q) => q === "team-a"))).toBe(true);
    expect(seen.webhooks.every((w) => w.secret === null)).toBe(true);
    for (const q of [
      "mutation($id: ID!) { deleteWebhook(id: $id) }",
      "mutation($id: ID!) { enableWebhook(id: $id) { id } }",
      "query($id: ID!) { webhookDeliveries(webhook: $id) { id } }",
    ]) {
      const r = await asMember(q, { id: adminHook.id });
      expect(r.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    }
    expect(await webhookOf(cp.api.adminToken, adminHook.id)).toBeDefined();
    const notAnId = await gql(cp.api.url, cp.api.adminToken, 'mutation { deleteWebhook(id: "nope") }');
    expect(notAnId.errors?.[0]).toMatchObject({
      message: 'webhook "nope" not found',
      extensions: { code: "NOT_FOUND" },
    });
    const denied = await gql(cp.api.url, viewer, "{ webhooks { id } }");
    expect(denied.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");

    expect(
      (await asMember("mutation($id: ID!) { deleteWebhook(id: $id) }", { id: created.id })).data,
    ).toEqual({
      deleteWebhook: true,
    });
    expect(await webhookOf(cp.api.adminToken, created.id)).toBeUndefined();
    await cp.admin("mutation($id: ID!) { deleteWebhook(id: $id) }", { id: adminHook.id });
  });

  it("refuses bad input naming the field, storing nothing", async () => {
    const before = await countRows(cp.api.db.url, "webhook");
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ url: "not a url", events: ["JOB_FAILED"] }, "input.url", /is not a URL/],
      [{ url: "http://user:pw@192.0.2.10/", events: ["JOB_FAILED"] }, "input.url", /user name or password/],
      [{ url: "http://192.0.2.10/", events: [] }, "input.events", /at least one event/],
      [
        { url: "http://192.0.2.10/", events: ["JOB_FAILED"], queues: ["nope"] },
        "input.queues[0]",
        /queue "nope" does not exist/,
      ],
      [
        { url: "http://192.0.2.10/", events: ["JOB_FAILED"], labels: [{ key: "k", values: [] }] },
        "input.labels[0].values",
        /at least one value/,
      ],
    ];
    for (const [i, field, message] of cases) {
      const r = await gql(cp.api.url, cp.api.adminToken, CREATE, { i });
      expect([r.errors?.[0]?.extensions?.field, r.errors?.[0]?.message]).toEqual([
        field,
        expect.stringMatching(message),
      ]);
    }
    expect(await countRows(cp.api.db.url, "webhook")).toBe(before);
  });
});
