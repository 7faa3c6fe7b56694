// A bind the agent refuses: the control plane believes a node has more GPUs than it really has
// (an inventory report that overstates it), so one pod of a gang is bound where it cannot run.
// The failed pod returns to Pending with the agent's reason, is held back (backoff) before being
// tried again, and the gang — running below its minimum — is evicted whole once the stale-gang
// grace period runs out (KAI's stalegangeviction), the agent carrying out the evictions.
import {
  bindRequestsOfJobs,
  MAX_BIND_REQUESTS_PAGE,
  MAX_PODS_PAGE,
  podsOfJobs,
} from "../../src/store/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defaultSchedulerConfig } from "../../src/core/index.js";
import { until } from "../agent/until.js";
import { ControlPlane, gpuJob } from "./harness.js";

const CLUSTER = `
nodeGroups:
  - { name: gpu, count: 2, cpu: 64, memory: 512Gi, gpus: 4, gpuModel: A100, gpuMemoryMiB: 81920 }
`;

let cp: ControlPlane;
let reporterToken: string;

/** Reports gpu-0 with this many GPUs, as an agent of c1 would. */
async function reportGpu0(gpus: number): Promise<void> {
  const res = await fetch(cp.api.url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${reporterToken}` },
    body: JSON.stringify({
      query: `mutation($n: [NodeReport!]!) { reportNodes(cluster: "c1", nodes: $n, complete: false) }`,
      variables: {
        n: [
          {
            name: "gpu-0",
            capacity: { cpu: 64_000, memory: String(512 * 2 ** 30), gpu: gpus, gpuMemory: gpus * 81_920 },
            gpuModel: "A100",
          },
        ],
      },
    }),
  });
  expect(((await res.json()) as { errors?: unknown }).errors).toBeUndefined();
}

beforeAll(async () => {
  cp = await ControlPlane.start();
  await cp.createQueue("team-a");
  await cp.addCluster("c1", CLUSTER);
  const token = await cp.admin<{ createToken: { secret: string } }>(
    `mutation { createToken(input: { name: "inventory-c1", role: AGENT, cluster: "c1" }) { secret } }`,
  );
  reporterToken = token.createToken.secret;
  const config = defaultSchedulerConfig();
  await cp.startWorkers({
    schedulerConfig: { ...config, session: { ...config.session, stalenessGracePeriodSeconds: 3 } },
    bindBackoff: { baseMs: 1000, maxMs: 4000 },
  });
}, 180_000); // the API, agents and workers start beside every other test file
afterAll(async () => cp?.close());

it("returns a refused pod to Pending with backoff, and evicts the gang left below its minimum", async () => {
  // The agent has reported its true inventory; now gpu-0 is claimed to have 8 GPUs.
  await until(async () => {
    const { cluster } = await cp.admin<{ cluster: { state: string } }>(`{ cluster(name: "c1") { state } }`);
    expect(cluster.state).toBe("READY");
  });
  await reportGpu0(8);
  // 3 × 4 GPUs: the scheduler sees 12 GPUs and places the gang; gpu-0 really takes one pod.
  const id = await cp.submit({ ...gpuJob("gang", "team-a", 3, 4), cluster: "c1" });

  const refused = await until(async () => {
    const pods = (await podsOfJobs(cp.api.server.store, [id], MAX_PODS_PAGE)).get(id) ?? [];
    const pod = pods.find((p) => p.message?.startsWith("bind to gpu-0 failed"));
    expect(pod).toBeDefined();
    return pod!;
  });
  expect(refused.message).toMatch(/cannot fit the pod/);
  const failed = (
    (await bindRequestsOfJobs(cp.api.server.store, [id], MAX_BIND_REQUESTS_PAGE)).get(id) ?? []
  ).filter((b) => b.podId === refused.id && b.state === "FAILED");
  expect(failed.length).toBeGreaterThanOrEqual(1);
  expect(failed[0]!.lastError).toMatch(/cannot fit the pod/);

  // Held back: the job says why it waits and until when.
  await until(async () =>
    expect((await cp.job(id)).pendingReason?.message).toMatch(/failed .*retrying after/),
  );

  // The two pods that did start form a gang below its minimum: evicted by the agent.
  await until(async () => {
    const evicted = (await cp.events("pods.evicted")).filter((e) => e.job === id);
    expect(evicted.some((e) => /gang fell below its minimum of 3/.test(e.message))).toBe(true);
    const results = (await cp.events("bind.result")).filter((e) => e.job === id);
    expect(results.some((e) => /eviction of .* succeeded/.test(e.message))).toBe(true);
  }, 60_000);

  // The true inventory again: 8 GPUs cannot hold the gang; it ends entirely Pending, nothing runs.
  await reportGpu0(4);
  await until(async () => {
    const j = await cp.job(id);
    expect(j.state).toBe("PENDING");
    expect(j.pods.map((p) => p.state)).toEqual(["PENDING", "PENDING", "PENDING"]);
    expect(cp.backends.get("c1")!.cluster.runningPodCount).toBe(0);
  }, 60_000);
});
