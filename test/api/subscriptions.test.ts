// Subscriptions over graphql-ws on the same port and path as HTTP, fanned out through Redis:
// with two API replicas, a change made through one reaches subscribers of the other.
import type { Client } from "graphql-ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/api/server.js";
import { runCycle } from "../helpers/cycle.js";
import { gqlOk, startTestApi, type TestApi, wsClient } from "../helpers/api.js";

let t: TestApi;
let other: ApiServer;
const clients: Client[] = [];

/** Collects the results of one subscription; `next(n)` waits for the n-th result. */
function subscribe<T>(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const results: { data?: T; errors?: { message: string; extensions?: { code?: string } }[] }[] = [];
  let failure: unknown = null;
  let wake = () => {};
  const stop = client.subscribe<T>(
    { query, variables },
    {
      next: (r) => {
        results.push(r as (typeof results)[number]);
        wake();
      },
      error: (e) => {
        failure = e;
        wake();
      },
      complete: () => wake(),
    },
  );
  return {
    results,
    stop,
    async next(n: number, timeoutMs = 10_000) {
      const end = Date.now() + timeoutMs;
      while (results.length < n && !failure) {
        if (Date.now() > end) throw new Error(`only ${results.length} of ${n} results arrived`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 50);
        });
      }
      if (failure) throw new Error(`subscription failed: ${JSON.stringify(failure)}`);
      return results[n - 1]!;
    },
    get failure() {
      return failure;
    },
  };
}

/** Subscriptions are live once the server has subscribed to Redis; give the handshake a moment. */
const settle = () => new Promise((r) => setTimeout(r, 300));

beforeAll(async () => {
  t = await startTestApi();
  other = await t.replica();
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "org" }) { name } }`);
  await gqlOk(
    t.url,
    t.adminToken,
    `mutation { createQueue(input: { name: "team-a", parent: "org" }) { name } }`,
  );
  await gqlOk(
    t.url,
    t.adminToken,
    `mutation { createQueue(input: { name: "team-b", parent: "org" }) { name } }`,
  );
  await gqlOk(t.url, t.adminToken, `mutation { registerCluster(input: { name: "c1" }) { name } }`);
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.dispose()));
  await t?.close();
});

const submit = (url: string, name: string, queue: string) =>
  gqlOk<{ submitJob: { id: string } }>(
    url,
    t.adminToken,
    "mutation($i: SubmitJobInput!) { submitJob(input: $i) { id } }",
    {
      i: { name, queue, cluster: "c1", tasks: [{ name: "w", replicas: 1, resources: { cpu: 100 } }] },
    },
  );

describe("subscriptions across replicas", () => {
  it("queueEvents on replica B sees a submit made on replica A, filtered by subtree", async () => {
    const client = wsClient(other.url, t.adminToken);
    clients.push(client);
    const teamA = subscribe<{ queueEvents: { kind: string; queue: string; message: string; job: string } }>(
      client,
      `subscription { queueEvents(queue: "team-a") { kind queue message job actor } }`,
    );
    const everything = subscribe<{ queueEvents: { kind: string } }>(
      client,
      `subscription { queueEvents { kind queue } }`,
    );
    await settle();
    await submit(t.url, "elsewhere", "team-b");
    const { submitJob } = await submit(t.url, "mine", "team-a");
    const first = await teamA.next(1);
    expect(first.data?.queueEvents).toMatchObject({
      kind: "job.submitted",
      queue: "team-a",
      job: submitJob.id,
    });
    await everything.next(2);
    expect(everything.results.map((r) => r.data?.queueEvents.kind)).toEqual([
      "job.submitted",
      "job.submitted",
    ]);
    await settle();
    expect(teamA.results).toHaveLength(1); // team-b's job was not in team-a's subtree
  });

  it("jobUpdated on replica B follows a job through placement, agent reports and cancellation made elsewhere", async () => {
    const { submitJob } = await submit(t.url, "watched", "team-a");
    const client = wsClient(other.url, t.adminToken);
    clients.push(client);
    const updates = subscribe<{
      jobUpdated: { id: string; state: string; pods: { state: string; node: string | null }[] };
    }>(client, `subscription($id: ID!) { jobUpdated(id: $id) { id state pods { state node } } }`, {
      id: submitJob.id,
    });
    await settle();
    await gqlOk(
      t.url,
      (await agentToken()).secret,
      `mutation { reportNodes(cluster: "c1", complete: true, nodes: [{ name: "n1", capacity: { cpu: 8000, memory: "64Gi" } }]) }`,
    );
    await runCycle(t.server.store, "c1"); // the scheduler commits (as a worker would, through the store)
    const placed = await updates.next(1);
    expect(placed.data?.jobUpdated).toMatchObject({
      id: submitJob.id,
      pods: [{ state: "BINDING", node: "n1" }],
    });
    await gqlOk(t.url, t.adminToken, "mutation($id: ID!) { cancelJob(id: $id) { state } }", {
      id: submitJob.id,
    });
    const end = Date.now() + 10_000;
    while (!updates.results.some((r) => r.data?.jobUpdated.state === "CANCELLED") && Date.now() < end)
      await settle();
    expect(updates.results.at(-1)?.data?.jobUpdated).toMatchObject({
      state: "CANCELLED",
      pods: [{ state: "RELEASING", node: "n1" }],
    });
  });

  it("refuses subscriptions without a valid token, for unknown jobs, and over the depth limit", async () => {
    const anonymous = wsClient(other.url, null);
    clients.push(anonymous);
    const denied = subscribe(anonymous, `subscription { queueEvents { kind } }`);
    await denied.next(1).catch(() => null);
    expect((denied.failure as { code?: number } | null)?.code).toBe(4403); // refused at connect

    const client = wsClient(other.url, t.adminToken);
    clients.push(client);
    const unknown = subscribe(
      client,
      `subscription { jobUpdated(id: "01900000-0000-7000-8000-000000000000") { id } }`,
    );
    const u = await unknown.next(1).catch(() => null);
    expect(u?.errors?.[0]?.extensions).toEqual({ code: "NOT_FOUND", field: "id" });

    const deep = subscribe(
      client,
      `subscription { jobUpdated(id: "01900000-0000-7000-8000-000000000000") { queue { parent { parent { parent { parent { parent { parent { parent { parent { parent { name } } } } } } } } } } } }`,
    );
    await deep.next(1).catch(() => null);
    expect(JSON.stringify(deep.failure ?? deep.results)).toMatch(/depth/i);
  });
});

async function agentToken() {
  return (
    await gqlOk<{ createToken: { secret: string } }>(
      t.url,
      t.adminToken,
      `mutation { createToken(input: { name: "agent", role: AGENT, cluster: "c1" }) { secret } }`,
    )
  ).createToken;
}
