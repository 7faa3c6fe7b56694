// Two teams contend for one cluster: team-a fills it beyond its deserved share while team-b is
// idle; when team-b submits, admission sends its job to the busy cluster (within team-b's fair
// share: reclaim makes room), the cycle reclaims from team-a, the agent carries out the
// evictions, and team-b's gang runs.
import { afterAll, beforeAll, expect, it } from "vitest";
import { until } from "../agent/until.js";
import { type ControlPlane, fillWithTeamA, gpuJob, twoTeamsOnOneCluster } from "./harness.js";

let cp: ControlPlane;

beforeAll(async () => {
  cp = await twoTeamsOnOneCluster();
}, 180_000); // the API, agents and workers start beside every other test file
afterAll(async () => cp?.close());

it("reclaims team-b's fair share from team-a, and the agent evicts", async () => {
  const teamA = await fillWithTeamA(cp);
  expect(cp.backends.get("c1")!.cluster.runningPodCount).toBe(8);

  // team-b names no cluster: admission has only c1, full, where team-b is within its share.
  const b = await cp.submit(gpuJob("b-gang", "team-b", 4, 1));
  const job = await until(async () => {
    const j = await cp.job(b);
    expect(j.state).toBe("RUNNING");
    return j;
  }, 60_000);
  expect(job.cluster?.name).toBe("c1");
  expect((await cp.events("job.assigned")).find((e) => e.job === b)?.message).toMatch(/reclaim makes room/);

  // Four of team-a's pods were reclaimed: evicted by the agent, back to Pending.
  const evictions = (await cp.events("pods.evicted")).filter((e) => teamA.includes(e.job!));
  expect(evictions).toHaveLength(4);
  for (const e of evictions) expect(e.message).toMatch(/reclaim|team-b|b-gang/i);
  const states = await Promise.all(teamA.map(async (id) => (await cp.job(id)).state));
  expect(states.filter((s) => s === "RUNNING")).toHaveLength(4);
  expect(states.filter((s) => s === "PENDING")).toHaveLength(4);
  expect(cp.backends.get("c1")!.cluster.runningPodCount).toBe(8);
  const bindResults = (await cp.events("bind.result")).filter((e) => teamA.includes(e.job!));
  expect(bindResults.filter((e) => /eviction of .* succeeded/.test(e.message))).toHaveLength(4);
});
