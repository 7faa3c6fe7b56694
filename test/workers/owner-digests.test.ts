// Admission's digests from the clusters' owners, over the real Redis signal channel: the owner
// answers from its cache with a digest equal to one computed from a fresh read, then "unchanged"
// while nothing changed, and a new digest once a job arrives; a cluster nobody owns is read by the
// asker when it has no base, and left out (its base kept) when it has one. A pass over owners'
// digests decides what a pass reading every cluster decides.
import { deserialize, serialize } from "node:v8";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defaultSchedulerConfig } from "../../src/core/index.js";
import { ClusterCache } from "../../src/store/index.js";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { loadSnapshot } from "../../src/store/snapshot/load-snapshot.js";
import { digestCluster } from "../../workers/admission/cluster-digest.js";
import { DigestServer, OwnerDigests } from "../../workers/admission/owner-digests.js";
import { AdmissionState, fullReads, localDigests } from "../../workers/admission/state.js";
import { WorkerSignals } from "../../workers/signals.js";
import { sql } from "../helpers/db.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { deleteTestKeys, TEST_REDIS_URL, testRedisPrefix } from "../helpers/redis.js";
import { admin, gpuNode, job } from "../store/fixtures.js";
import { admissionPass } from "./admission-pass.js";

const log = pino({ level: "silent" });
const config = defaultSchedulerConfig();
const prefix = testRedisPrefix();
let t: TestStore;
let redis: Redis;
let blocking: Redis;
let signals: WorkerSignals;
let owners: OwnerDigests;
/** The clusters the one owner here owns. */
const owned = new Set(["alpha"]);

const gpus = (name: string, replicas: number, gpu: number, cluster?: string) =>
  job({ name, cluster, tasks: [{ name: "w", replicas, resources: { cpu: 1000, memory: "1Gi", gpu } }] });
const req = { now: Date.now(), config };

beforeAll(async () => {
  t = await openTestStore();
  await createQueue(t.store, admin, { name: "team-a" });
  for (const c of ["alpha", "beta"]) {
    await registerCluster(t.store, admin, { name: c });
    await reportNodes(
      t.store,
      { name: `agent:${c}` },
      { cluster: c, complete: true, nodes: [gpuNode("n1", 8), gpuNode("n2", 8)] },
    );
  }
  await submitJob(t.store, admin, gpus("running", 2, 4, "alpha"));
  redis = new Redis(TEST_REDIS_URL);
  blocking = new Redis(TEST_REDIS_URL);
  const server = new DigestServer(redis, prefix, "w1", new ClusterCache(t.store), undefined, config, (c) =>
    owned.has(c) ? { epoch: 3 } : null,
  );
  signals = await WorkerSignals.open(redis, TEST_REDIS_URL, prefix, log, (s) => {
    if (s.kind === "digests") void server.answer(s);
  });
  owners = new OwnerDigests(
    redis,
    blocking,
    prefix,
    (s) => signals.send(s),
    localDigests(fullReads(t.store)),
    500,
    log,
  );
});
afterAll(async () => {
  signals?.close();
  await deleteTestKeys(prefix, redis);
  redis?.disconnect();
  blocking?.disconnect();
  await t?.close();
});

it("answers with the owner's digest, then unchanged, then a new one after a change", async () => {
  const first = (await owners.digests(["alpha"], new Map(), req)).get("alpha")!;
  expect(first.token).toMatch(/^w1:3:\d+$/);
  const fresh = digestCluster((await loadSnapshot(t.store, "alpha")).snapshot, config);
  // The same digest as one computed here from a fresh read (the clock aside).
  expect({
    ...first.digest!,
    shell: { ...first.digest!.shell, now: 0 },
    compact: { ...first.digest!.compact, now: 0 },
  }).toEqual(
    deserialize(
      serialize({ ...fresh, shell: { ...fresh.shell, now: 0 }, compact: { ...fresh.compact, now: 0 } }),
    ),
  );
  const again = (await owners.digests(["alpha"], new Map([["alpha", first.token]]), req)).get("alpha")!;
  expect(again).toEqual({ token: first.token, digest: null });
  await submitJob(t.store, admin, gpus("new", 1, 2, "alpha"));
  const after = (await owners.digests(["alpha"], new Map([["alpha", first.token]]), req)).get("alpha")!;
  expect(after.token).not.toBe(first.token);
  expect(after.digest!.pending.map((j) => j.name)).toEqual([]);
  expect(after.digest!.compact.jobs.some((j) => j.name === "new")).toBe(true);
});

it("reads a cluster no owner answers for when it has no base, and keeps the base it has", async () => {
  const none = await owners.digests(["beta"], new Map(), req);
  expect(none.get("beta")?.token).toMatch(/^local:/);
  expect(none.get("beta")?.digest?.shell.nodes.map((n) => n.name)).toEqual(["n1", "n2"]);
  const kept = await owners.digests(["beta"], new Map([["beta", "local:1"]]), req);
  expect(kept.has("beta")).toBe(false);
});

it("decides what a pass reading every cluster decides", async () => {
  owned.add("beta");
  for (let i = 0; i < 6; i++) await submitJob(t.store, admin, gpus(`j${i}`, 2, 3));
  const overOwners = await admissionPass(t.store, { state: new AdmissionState(owners) });
  // The same pass again, from nothing, each cluster read here: the same decisions.
  await sql(t.testDb.url, "UPDATE job SET cluster_name = NULL WHERE name LIKE 'j%'");
  const readHere = await admissionPass(t.store, { state: new AdmissionState(fullReads(t.store)) });
  const decisions = (r: typeof overOwners) => r.assigned.map((d) => [d.job, d.cluster, d.tier]);
  expect(decisions(overOwners).length).toBeGreaterThan(0);
  expect(decisions(readHere)).toEqual(decisions(overOwners));
});
