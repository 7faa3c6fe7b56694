// What `cluster { allocated }` costs on a big cluster: the API's read (node_allocation, kept by
// triggers on pod) against summing every pod of the cluster, on a cluster seeded in the shape of
// bench:cycle (4,000 nodes: 100,000 running pods). Medians over --runs reads.
//
//   npm run bench:allocated -- [--nodes 4000] [--runs 5]
import os from "node:os";
import { parseArgs } from "node:util";
import { openDatabase } from "../src/store/index.js";
import { prismaOf } from "../src/store/testing.js";
import { allocatedByCluster, allocatedByNode } from "../src/store/queries/allocation.js";
import { admin, createTestDatabase } from "../test/helpers/db.js";
import { clusterShape, seedCluster } from "./seed-cluster.js";
import { median } from "./timing.js";

const { values: opt } = parseArgs({
  options: { nodes: { type: "string", default: "4000" }, runs: { type: "string", default: "5" } },
});
const NODES = Number(opt.nodes);
const RUNS = Number(opt.runs);
for (const [k, v] of Object.entries({ NODES, RUNS }))
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${k.toLowerCase()} must be a positive integer`);

const CLUSTER = "c1";
const db = await createTestDatabase();
try {
  const seeding = performance.now();
  await admin((c) => seedCluster(c, CLUSTER, clusterShape(NODES)), db.url);
  console.log(`seeded ${NODES} nodes in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
  const prisma = prismaOf(await openDatabase(db.url));
  const timed = async (f: () => Promise<unknown>) => {
    const ms: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      await f();
      ms.push(performance.now() - t0);
    }
    return median(ms);
  };
  const trivial = await timed(() => prisma.$queryRaw`SELECT 1`);
  const kept = await timed(() => allocatedByNode(prisma, [CLUSTER]));
  const total = await timed(() => allocatedByCluster(prisma, [CLUSTER]));
  const summed = await timed(
    () => prisma.$queryRaw`
      SELECT p.node_name, sum(p.cpu_millis), sum(p.memory), sum(p.gpus + p.gpu_fraction), sum(p.gpu_memory)
      FROM pod p JOIN job j ON j.id = p.job_id
      WHERE p.state IN ('BINDING', 'RUNNING', 'RELEASING') AND p.node_name IS NOT NULL AND j.cluster_name = ${CLUSTER}
      GROUP BY 1`,
  );
  console.log(
    `${NODES} nodes: cluster total ${total.toFixed(1)} ms, per node ${kept.toFixed(1)} ms from node_allocation; ` +
      `summed over every pod ${summed.toFixed(1)} ms; a trivial query ${trivial.toFixed(1)} ms ` +
      `(median of ${RUNS}; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")})`,
  );
  await prisma.$disconnect();
} finally {
  await db.drop();
}
