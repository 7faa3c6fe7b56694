// A victim search bounded to one scenario per job and cycle, against the real API, PostgreSQL,
// Redis, workers and a simulated agent: team-b's gang of four needs a scenario per pod, so no
// single cycle can reclaim for it; each cycle goes on from where the last one stopped (the
// worker keeps the search cursors) until the gang runs.
import { afterAll, beforeAll, expect, it } from "vitest";
import { defaultSchedulerConfig } from "../../src/core/index.js";
import { until } from "../agent/until.js";
import { ControlPlane, gpuJob } from "./harness.js";

const CLUSTER = `
nodeGroups:
  - { name: gpu, count: 2, cpu: 64, memory: 512Gi, gpus: 4, gpuModel: A100, gpuMemoryMiB: 81920 }
`;

let cp: ControlPlane;

beforeAll(async () => {
  cp = await ControlPlane.start();
  await cp.createQueue("org");
  await cp.createQueue("team-a", "org");
  await cp.createQueue("team-b", "org");
  await cp.setQuota("team-a", "GPU", 4);
  await cp.setQuota("team-b", "GPU", 4);
  await cp.addCluster("c1", CLUSTER);
  const config = defaultSchedulerConfig();
  config.session.maxScenariosPerJob = 1;
  await cp.startWorkers({ schedulerConfig: config });
}, 180_000);
afterAll(async () => cp?.close());

it("reclaims for a gang over several cycles, one scenario each", async () => {
  const teamA: string[] = [];
  for (let i = 0; i < 8; i++)
    teamA.push(await cp.submit({ ...gpuJob(`a-${i}`, "team-a", 1, 1), cluster: "c1" }));
  await until(async () => {
    for (const id of teamA) expect((await cp.job(id)).state).toBe("RUNNING");
  }, 60_000);

  const b = await cp.submit({ ...gpuJob("b-gang", "team-b", 4, 1), cluster: "c1" });
  // While it waits, the cycles that stopped on the budget say so in its pending reason.
  const reasons = new Set<string>();
  await until(async () => {
    const j = await cp.job(b);
    if (j.pendingReason) reasons.add(j.pendingReason.message);
    expect(j.state).toBe("RUNNING");
  }, 90_000);
  expect([...reasons].some((r) => /reclaim: search stopped after 1 scenarios/.test(r))).toBe(true);
  const evictions = (await cp.events("pods.evicted")).filter((e) => teamA.includes(e.job!));
  expect(evictions).toHaveLength(4);
});
