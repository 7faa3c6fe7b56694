// A pass that reuses what the worker kept (per-cluster bases from its cluster cache, the jobs it
// could send nowhere) decides exactly what a pass from scratch decides: two databases go through
// the same random sequences of submissions, cancellations, node changes, quota changes and passes;
// one worker keeps its state between passes, the other starts each pass from nothing.
import { afterAll, beforeAll, expect, it } from "vitest";
import { ClusterCache } from "../../src/store/index.js";
import { cancelJob } from "../../src/store/operations/jobs.js";
import { registerCluster } from "../../src/store/operations/clusters.js";
import { createQueue, setQueueQuota } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import { submitJob } from "../../src/store/operations/submit-job.js";
import { AdmissionState } from "../../workers/index.js";
import { prng } from "../../bench/generate.js";
import { openTestStore, type TestStore } from "../helpers/store.js";
import { admin, gpuNode, job } from "../store/fixtures.js";
import { admissionPass } from "./admission-pass.js";

const CLUSTERS = ["alpha", "beta", "gamma"];
const QUEUES = ["team-a", "team-b", "team-c"];

let kept: TestStore;
let scratch: TestStore;

beforeAll(async () => {
  [kept, scratch] = await Promise.all([openTestStore(), openTestStore()]);
});
afterAll(async () => {
  await kept?.close();
  await scratch?.close();
});

/** One database's side of the sequence: job names → ids (ids differ between the databases). */
class Side {
  readonly ids = new Map<string, string>();
  readonly names = new Map<string, string>();
  constructor(
    readonly t: TestStore,
    readonly state?: AdmissionState,
  ) {}

  async pass() {
    const r = await admissionPass(this.t.store, { state: this.state });
    return r.assigned.map((d) => [this.names.get(d.job), d.cluster, d.tier]).sort();
  }
}

it("decides what a pass from scratch decides, over random sequences", async () => {
  const sides = [
    new Side(kept, new AdmissionState(new ClusterCache(kept.store))),
    new Side(scratch),
  ] as const;
  const both = (f: (s: Side) => Promise<unknown>) => Promise.all(sides.map(f));
  await both(async ({ t }) => {
    for (const q of QUEUES) await createQueue(t.store, admin, { name: q });
    for (const c of CLUSTERS) await registerCluster(t.store, admin, { name: c });
  });
  const rnd = prng(7);
  const nodes = new Map(CLUSTERS.map((c) => [c, 1 + Math.floor(rnd() * 3)]));
  const report = (c: string) =>
    both(({ t }) =>
      reportNodes(
        t.store,
        { name: `agent:${c}` },
        {
          cluster: c,
          complete: true,
          nodes: Array.from({ length: nodes.get(c)! }, (_, i) => gpuNode(`${c}-n${i}`, 8)),
        },
      ),
    );
  for (const c of CLUSTERS) await report(c);

  let submitted = 0;
  let passes = 0;
  let assigned = 0;
  for (let step = 0; step < 60; step++) {
    const x = rnd();
    if (x < 0.5) {
      const name = `j${submitted++}`;
      const spec = job({
        name,
        queue: QUEUES[Math.floor(rnd() * QUEUES.length)]!,
        tasks: [
          {
            name: "w",
            replicas: 1 + Math.floor(rnd() * 3),
            resources: { cpu: 1000, memory: "1Gi", gpu: [1, 2, 4, 8][Math.floor(rnd() * 4)]! },
          },
        ],
      });
      await both(async (s) => {
        const id = (await submitJob(s.t.store, admin, spec)).job.id;
        s.ids.set(name, id);
        s.names.set(id, name);
      });
    } else if (x < 0.6 && submitted) {
      const name = `j${Math.floor(rnd() * submitted)}`;
      await both((s) => cancelJob(s.t.store, admin, { id: s.ids.get(name)! }).catch(() => null));
    } else if (x < 0.7) {
      const c = CLUSTERS[Math.floor(rnd() * CLUSTERS.length)]!;
      nodes.set(c, Math.max(1, nodes.get(c)! + (rnd() < 0.6 ? 1 : -1)));
      await report(c);
    } else if (x < 0.75) {
      const queue = QUEUES[Math.floor(rnd() * QUEUES.length)]!;
      const cluster = CLUSTERS[Math.floor(rnd() * CLUSTERS.length)]!;
      const gpu = Math.floor(rnd() * 16);
      await both(({ t }) =>
        setQueueQuota(t.store, admin, { queue, cluster, resource: "GPU", deserved: gpu }),
      );
    } else {
      const [a, b] = await Promise.all(sides.map((s) => s.pass()));
      expect(a, `step ${step}`).toEqual(b);
      passes++;
      assigned += a!.length;
    }
  }
  expect(passes).toBeGreaterThan(5);
  expect(assigned).toBeGreaterThan(5); // the comparison is about passes that decide something
}, 240_000);
