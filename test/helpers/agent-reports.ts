// A cluster's agent reporting at random, for the tests that drive clusters through random
// sequences of changes (the cluster cache's, the cycle skip's): results for some of the open bind
// requests, and new phases for some of the pods that hold a node.
import type { Actor } from "../../src/store/index.js";
import { reportBindResult, reportPodStatus } from "../../src/store/index.js";
import { sql } from "./db.js";
import type { Prng } from "./prng.js";
import type { TestStore } from "./store.js";

/** Results for a random `share` of the cluster's open bind requests, `ok` of them succeeding. */
export async function reportSomeBindResults(
  t: TestStore,
  agent: Actor,
  cluster: string,
  r: Prng,
  opts: { share: number; ok: number; message?: string },
): Promise<void> {
  const requests = await sql<{ id: string }>(
    t.testDb.url,
    "SELECT id::text FROM bind_request WHERE cluster_name = $1 AND state IN ('PENDING', 'DISPATCHED') ORDER BY id",
    [cluster],
  );
  const some = requests.filter(() => r.next() < opts.share);
  if (!some.length) return;
  const message = opts.message === undefined ? {} : { message: opts.message };
  await reportBindResult(t.store, agent, {
    cluster,
    results: some.map((b) => ({ bindRequest: b.id, ok: r.next() < opts.ok, ...message })),
  });
}

type Holding = "BINDING" | "RUNNING" | "RELEASING";
type Reported = "RUNNING" | "SUCCEEDED" | "FAILED";

/** A random `share` of the cluster's pods that hold a node, each moved on to `next(state)`. */
export async function reportSomePodPhases(
  t: TestStore,
  agent: Actor,
  cluster: string,
  r: Prng,
  share: number,
  next: (state: Holding) => Reported,
): Promise<void> {
  const pods = await sql<{ jobId: string; name: string; state: Holding }>(
    t.testDb.url,
    `SELECT p.job_id::text AS "jobId", p.name, p.state::text FROM pod p JOIN job j ON j.id = p.job_id
     WHERE j.cluster_name = $1 AND p.state IN ('BINDING', 'RUNNING', 'RELEASING') ORDER BY p.id`,
    [cluster],
  );
  const some = pods.filter(() => r.next() < share);
  if (!some.length) return;
  await reportPodStatus(t.store, agent, {
    cluster,
    updates: some.map((p) => ({ job: p.jobId, pod: p.name, state: next(p.state) })),
  });
}
