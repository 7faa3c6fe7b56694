// A victim search bounded to one scenario per job and cycle, against the real API, PostgreSQL,
// Redis, workers and a simulated agent: team-b's gang of four needs a scenario per pod, so no
// single cycle can reclaim for it; each cycle goes on from where the last one stopped (the
// worker keeps the search cursors) until the gang runs.
import { afterAll, beforeAll, expect, it } from "vitest";
import { defaultSchedulerConfig } from "../../src/core/index.js";
import { metrics } from "../../workers/metrics.js";
import { until } from "../agent/until.js";
import { type ControlPlane, fillWithTeamA, gpuJob, twoTeamsOnOneCluster } from "./harness.js";

let cp: ControlPlane;

beforeAll(async () => {
  const schedulerConfig = defaultSchedulerConfig();
  schedulerConfig.session.maxScenariosPerJob = 1;
  cp = await twoTeamsOnOneCluster({ schedulerConfig });
}, 180_000);
afterAll(async () => cp?.close());

it("reclaims for a gang over several cycles, one scenario each", async () => {
  const teamA = await fillWithTeamA(cp);
  const b = await cp.submit({ ...gpuJob("b-gang", "team-b", 4, 1), cluster: "c1" });
  // While it waits, the cycles that stopped on the budget say so in its pending reason.
  const reasons = new Set<string>();
  // …and the workers' gauge counts the searches going on in the next cycle.
  const stopped = async () =>
    (await metrics.getSingleMetric("fleetq_search_cursors")!.get()).values.find(
      (v) => v.labels.cluster === "c1",
    )?.value ?? 0;
  let mostStopped = 0;
  await until(async () => {
    const j = await cp.job(b);
    if (j.pendingReason) reasons.add(j.pendingReason.message);
    mostStopped = Math.max(mostStopped, await stopped());
    expect(j.state).toBe("RUNNING");
  }, 90_000);
  expect([...reasons].some((r) => /reclaim: search stopped after 1 scenarios/.test(r))).toBe(true);
  expect(mostStopped).toBeGreaterThan(0);
  await until(async () => expect(await stopped()).toBe(0), 30_000);
  const evictions = (await cp.events("pods.evicted")).filter((e) => teamA.includes(e.job!));
  expect(evictions).toHaveLength(4);
});
