// Webhooks in the store: which webhooks an event goes to and what an attempt changes (plain
// planning, no database), then on PostgreSQL: the outbox the event trigger fills, fanned out once
// by competing workers, the bounded delivery log, and disabling after failures in a row.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createQueue,
  createWebhook,
  deleteWebhook,
  InvalidInputError,
  NotFoundError,
  enableWebhook,
  fanOutWebhookEvents,
  QueueTree,
  recordEvents,
  recordWebhookAttempt,
  replaceJobEstimates,
  reportOverdueStarts,
  submitJob,
  WEBHOOK_DELIVERY_LOG,
  WEBHOOK_SOURCE_KINDS,
  webhookDeliveries,
  webhookDeliveryToSend,
} from "../../src/store/index.js";
import { planAttempt, planDeliveries, type WebhookSourceEvent } from "../../src/store/domain/webhooks.js";
import { countRows, sql } from "../helpers/db.js";
import { openTestStore, type TestStore } from "../helpers/store.js";

const tree = new QueueTree([
  { name: "org", parentName: null },
  { name: "a", parentName: "org" },
  { name: "a1", parentName: "a" },
  { name: "b", parentName: "org" },
]);

const job = (queue: string, labels: Record<string, string> = {}) => ({
  id: `job-${queue}`,
  name: `train-${queue}`,
  queue,
  cluster: "c1",
  state: "RUNNING",
  labels,
  createdAt: new Date("2026-01-01T00:00:00Z"),
  startedAt: new Date("2026-01-01T00:01:00Z"),
  finishedAt: null,
  restarts: 0,
  estimatedStart: null,
});

const event = (kind: string, j: ReturnType<typeof job> | null, id = "1"): WebhookSourceEvent => ({
  id,
  at: new Date("2026-01-01T00:02:00Z"),
  kind,
  message: `${kind} happened`,
  queue: j?.queue ?? null,
  cluster: "c1",
  job: j,
});

describe("planning", () => {
  const hooks = [
    { id: "all", events: ["job.preempted", "cluster.lost"], queues: [], labels: [] },
    { id: "a-tree", events: ["job.preempted"], queues: ["a"], labels: [] },
    {
      id: "a-nightly",
      events: ["job.preempted"],
      queues: ["a"],
      labels: [{ key: "ci", values: ["nightly", "weekly"] }],
    },
    { id: "failures", events: ["job.failed"], queues: [], labels: [] },
  ];
  const takers = (e: WebhookSourceEvent) => planDeliveries([e], hooks, tree, null).map((d) => d.webhookId);

  it("a scheduler's eviction is job.preempted, to webhooks whose subtrees and labels take the job", () => {
    expect(takers(event("pods.evicted", job("a1", { ci: "nightly" })))).toEqual([
      "all",
      "a-tree",
      "a-nightly",
    ]);
    expect(takers(event("pods.evicted", job("a1", { ci: "adhoc" })))).toEqual(["all", "a-tree"]);
    expect(takers(event("pods.evicted", job("b", { ci: "nightly" })))).toEqual(["all"]);
    expect(takers(event("job.pending", job("a1")))).toEqual([]);
  });

  it("cluster.lost goes to every webhook asking for it, whatever its queues", () => {
    expect(takers(event("cluster.lost", null))).toEqual(["all"]);
  });

  it("the payload: a one-line text for chat tools beside the structured fields", () => {
    const [d] = planDeliveries(
      [event("pods.evicted", job("a1"), "42")],
      hooks,
      tree,
      "https://fleetq.example",
    );
    expect(d!.payload).toEqual({
      text: "[fleetq] job train-a1 (queue a1, cluster c1) preempted: its pods are being evicted",
      event: "job.preempted",
      eventId: "42",
      at: "2026-01-01T00:02:00.000Z",
      message: "pods.evicted happened",
      queue: "a1",
      cluster: "c1",
      job: {
        id: "job-a1",
        name: "train-a1",
        queue: "a1",
        cluster: "c1",
        state: "RUNNING",
        labels: {},
        createdAt: "2026-01-01T00:00:00.000Z",
        startedAt: "2026-01-01T00:01:00.000Z",
        finishedAt: null,
        restarts: 0,
        estimatedStart: null,
      },
      link: "https://fleetq.example/#job=job-a1",
    });
    const lost = planDeliveries([event("cluster.lost", null)], hooks, tree, null)[0]!.payload;
    expect(lost.text).toBe("[fleetq] cluster c1 lost: cluster.lost happened");
    expect(lost.job).toBeNull();
  });

  it("an attempt: success resets the run of failures; the given-up delivery that completes it disables", () => {
    const w = { consecutiveFailures: 1, enabled: true };
    const fail = { ok: false, responseCode: 500, error: "HTTP 500", final: false };
    expect(planAttempt({ ok: true, responseCode: 200, error: null, final: false }, w, 2)).toEqual({
      state: "SUCCEEDED",
      consecutiveFailures: 0,
      disable: null,
    });
    expect(planAttempt(fail, w, 2)).toEqual({ state: "PENDING", consecutiveFailures: 1, disable: null });
    expect(planAttempt({ ...fail, final: true }, w, 3)).toEqual({
      state: "FAILED",
      consecutiveFailures: 2,
      disable: null,
    });
    expect(planAttempt({ ...fail, final: true }, w, 2)).toEqual({
      state: "FAILED",
      consecutiveFailures: 2,
      disable: "disabled after 2 failed deliveries in a row (last: HTTP 500)",
    });
  });
});

describe("on PostgreSQL", () => {
  let ts: TestStore;
  const actor = { name: "ops" };
  const lost = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      kind: "cluster.lost",
      cluster: `c${i}`,
      message: `cluster c${i} lost`,
    }));
  const url = () => ts.testDb.url;
  const outbox = () => countRows(url(), "webhook_outbox");
  const messagesOf = async (where: string, params: unknown[] = []) =>
    (
      await sql<{ message: string }>(url(), `SELECT message FROM event WHERE ${where} ORDER BY id`, params)
    ).map((e) => e.message);

  beforeAll(async () => {
    ts = await openTestStore();
    await createQueue(ts.store, actor, { name: "a" });
  });
  afterAll(() => ts?.close());

  it("writes no outbox rows while no webhook is enabled", async () => {
    await recordEvents(ts.store, actor, lost(3));
    expect(await outbox()).toBe(0);
  });

  it("fans each event out once, however many workers claim the outbox at once", async () => {
    const hooks = await Promise.all(
      [1, 2].map(() =>
        createWebhook(ts.store, actor, { url: "http://192.0.2.1/", events: ["cluster.lost"] }),
      ),
    );
    await createWebhook(ts.store, actor, { url: "http://192.0.2.1/", events: ["job.failed"] });
    // Other kinds never reach the outbox.
    await recordEvents(ts.store, actor, [...lost(40), { kind: "queue.updated", queue: "a", message: "x" }]);
    expect(await outbox()).toBe(40);
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => fanOutWebhookEvents(ts.store, { limit: 7, link: null })),
    );
    const created = runs.flatMap((r) => r.deliveries);
    // What the competing runs left (each took at most 7).
    for (;;) {
      const r = await fanOutWebhookEvents(ts.store, { limit: 7, link: null });
      created.push(...r.deliveries);
      if (!r.claimed) break;
    }
    expect(await outbox()).toBe(0);
    expect(new Set(created).size).toBe(80);
    const rows = await sql<{ webhook_id: string; event_id: string }>(
      url(),
      "SELECT webhook_id, event_id FROM webhook_delivery",
    );
    expect(rows).toHaveLength(80);
    for (const h of hooks) expect(rows.filter((r) => r.webhook_id === h.id)).toHaveLength(40);
    const d = await webhookDeliveryToSend(ts.store, created[0]!);
    expect(d?.webhook.secret).toMatch(/^whsec_/);
    expect((d?.payload as { event: string }).event).toBe("cluster.lost");
  });

  it("refuses ids that are no webhook's, naming the field", async () => {
    await expect(deleteWebhook(ts.store, actor, "nope")).rejects.toBeInstanceOf(InvalidInputError);
    await expect(enableWebhook(ts.store, actor, "nope")).rejects.toMatchObject({ field: "id" });
    await expect(
      deleteWebhook(ts.store, actor, "01a248f0-2818-75f6-ac99-4f89d757786c"),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it("the trigger keeps exactly the kinds webhooks report", async () => {
    await sql(url(), "DELETE FROM webhook_outbox");
    const kinds = [...WEBHOOK_SOURCE_KINDS, "job.pending", "job.cancelled", "pods.bound", "cluster.ready"];
    await recordEvents(
      ts.store,
      actor,
      kinds.map((kind) => ({ kind, message: kind })),
    );
    const kept = await sql<{ kind: string }>(
      url(),
      "SELECT e.kind FROM webhook_outbox o JOIN event e ON e.id = o.event_id ORDER BY e.id",
    );
    expect(kept.map((k) => k.kind)).toEqual([...WEBHOOK_SOURCE_KINDS]);
    await sql(url(), "DELETE FROM webhook_outbox");
  });

  it("keeps a bounded log of finished deliveries per webhook", async () => {
    await sql(url(), "DELETE FROM webhook");
    const hook = await createWebhook(ts.store, actor, { url: "http://192.0.2.1/", events: ["cluster.lost"] });
    const finish = async (n: number) => {
      await recordEvents(ts.store, actor, lost(n));
      const { deliveries } = await fanOutWebhookEvents(ts.store, { limit: 1000, link: null });
      for (const id of deliveries)
        await recordWebhookAttempt(ts.store, actor, {
          delivery: id,
          ok: true,
          responseCode: 200,
          error: null,
          final: false,
          disableAfter: 10,
        });
    };
    await finish(WEBHOOK_DELIVERY_LOG);
    await finish(5);
    // The next fan-out prunes what the last one finished beyond the bound.
    await recordEvents(ts.store, actor, lost(1));
    await fanOutWebhookEvents(ts.store, { limit: 1000, link: null });
    const all = await sql<{ state: string }>(
      url(),
      "SELECT state FROM webhook_delivery WHERE webhook_id = $1",
      [hook.id],
    );
    expect(all.filter((d) => d.state === "SUCCEEDED")).toHaveLength(WEBHOOK_DELIVERY_LOG);
    expect(all.filter((d) => d.state === "PENDING")).toHaveLength(1);
    expect(await webhookDeliveries(ts.store, hook.id, { first: 3 })).toHaveLength(3);
  });

  it("disables after failed deliveries in a row: its pending deliveries given up, one event; enabling starts afresh", async () => {
    await sql(url(), "DELETE FROM webhook");
    const hook = await createWebhook(ts.store, actor, {
      url: "http://192.0.2.1/services/T0/B0/s3cret",
      events: ["cluster.lost"],
    });
    await recordEvents(ts.store, actor, lost(3));
    const { deliveries } = await fanOutWebhookEvents(ts.store, { limit: 10, link: null });
    const fail = { ok: false, responseCode: 500, error: "HTTP 500", final: true, disableAfter: 2 };
    expect(await recordWebhookAttempt(ts.store, actor, { ...fail, delivery: deliveries[0]! })).toEqual({
      state: "FAILED",
      disabled: false,
    });
    expect(await recordWebhookAttempt(ts.store, actor, { ...fail, delivery: deliveries[1]! })).toEqual({
      state: "FAILED",
      disabled: true,
    });
    // The third is no longer to be sent, and an attempt recorded for it late changes nothing.
    expect(await webhookDeliveryToSend(ts.store, deliveries[2]!)).toBeNull();
    expect(await recordWebhookAttempt(ts.store, actor, { ...fail, delivery: deliveries[2]! })).toBeNull();
    const rows = await webhookDeliveries(ts.store, hook.id, { first: 10 });
    expect(rows.map((r) => [r.state, r.attempts, r.error])).toEqual([
      ["FAILED", 0, "webhook disabled"],
      ["FAILED", 1, "HTTP 500"],
      ["FAILED", 1, "HTTP 500"],
    ]);
    expect(await messagesOf("kind = 'webhook.disabled'")).toEqual([
      `webhook ${hook.id} to http://192.0.2.1 disabled after 2 failed deliveries in a row (last: HTTP 500)`,
    ]);
    // The event log, which every token may read, names the origin only: chat tools put credentials in the path.
    expect((await messagesOf("kind LIKE 'webhook.%'")).join("\n")).not.toContain("s3cret");
    // Disabled: no outbox rows for it (no webhook is enabled).
    await recordEvents(ts.store, actor, lost(1));
    expect(await outbox()).toBe(0);
    const again = await enableWebhook(ts.store, actor, hook.id);
    expect([again.enabled, again.consecutiveFailures, again.disabledReason]).toEqual([true, 0, null]);
  });

  it("reports a pending job past its first estimated start once, and only while a webhook asks for it", async () => {
    await sql(url(), "DELETE FROM webhook");
    const pending = async (name: string) =>
      (
        await submitJob(ts.store, actor, {
          name,
          queue: "a",
          tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 } }],
        })
      ).job;
    const t0 = new Date("2026-06-01T12:00:00Z");
    const at = (ms: number) => new Date(t0.getTime() + ms);
    const check = (now: Date) => reportOverdueStarts(ts.store, actor, { now, graceMs: 60_000 });
    // No webhook asks: the job's lateness passes unreported, and a webhook created later does not
    // hear of it.
    const unheard = await pending("unheard");
    await replaceJobEstimates(ts.store, null, [{ jobId: unheard.id, cluster: null, start: t0 }], t0);
    expect(await check(at(120_000))).toEqual([]);

    await createWebhook(ts.store, actor, { url: "http://192.0.2.1/", events: ["job.waiting_past_estimate"] });
    const job = await pending("late");
    const both = (start: Date) => [
      { jobId: unheard.id, cluster: null, start },
      { jobId: job.id, cluster: null, start },
    ];
    await replaceJobEstimates(ts.store, null, both(t0), t0);
    expect(await check(at(30_000))).toEqual([]);
    // A later estimate moves with the queue; the first one stays what the job was promised.
    await replaceJobEstimates(ts.store, null, both(at(600_000)), t0);
    const late = await check(at(61_000));
    expect(late).toEqual([{ id: job.id, name: "late", queue: "a", cluster: null, estimatedStart: t0 }]);
    expect(await check(at(300_000))).toEqual([]);
    const events = await sql<{ job_id: string; message: string }>(
      url(),
      "SELECT job_id, message FROM event WHERE kind = 'job.waiting_past_estimate' AND job_id = ANY($1::uuid[]) ORDER BY id",
      [[unheard.id, job.id]],
    );
    expect(events.map((e) => [e.job_id, e.message])).toEqual([
      [job.id, "job late still pending 1 min past its estimated start 2026-06-01T12:00:00.000Z"],
    ]);
  });
});
