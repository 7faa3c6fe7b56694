// Requests of one pod are carried out one at a time and in the order the control plane decided
// them, on the real simulated backend: a bind decided before an eviction that was carried out
// first must not run the pod.
import { describe, expect, it } from "vitest";
import type { NodeInventory } from "../../src/agent/backends/types.js";
import { SimulatedBackend } from "../../src/agent/backends/simulated/simulated-backend.js";
import { SimulatedCluster } from "../../src/agent/backends/simulated/simulated-cluster.js";
import { executeRequest } from "../../src/agent/bind-executor.js";
import { PodRequestOrder } from "../../src/agent/pod-request-order.js";
import { JobSpecCache } from "../../src/agent/job-spec-cache.js";
import type { BindRequestMessage } from "../../src/protocol/bind-request.js";
import { bindRequest } from "./bind-requests.js";

const node: NodeInventory = {
  name: "n0",
  capacity: { cpuMillis: 8000, memory: 2 ** 34, gpus: 8, gpuMemory: 81920 },
  labels: {},
  gpuModel: "H100",
  unschedulable: false,
  ready: true,
  maxPods: 110,
  taints: [],
};

function setup() {
  const backend = new SimulatedBackend(new SimulatedCluster([node], 60), {}, { now: () => 0 });
  const order = new PodRequestOrder();
  const executed: string[] = [];
  const run = (request: BindRequestMessage) =>
    order.run(request, async () => {
      executed.push(request.id);
      return executeRequest(
        backend,
        "c1",
        request,
        new JobSpecCache({
          jobRenderSpec: async () => {
            throw new Error("no job");
          },
        }),
      );
    });
  return { backend, run, executed };
}

const at = (generation: number, request: BindRequestMessage): BindRequestMessage => ({
  ...request,
  generation,
});

describe("PodRequestOrder", () => {
  it("answers a bind older than an eviction already carried out for the pod, without running it", async () => {
    const { backend, run, executed } = setup();
    const evict = at(7, bindRequest({ id: "evict", kind: "evict", pod: "p0", node: "n0" }));
    const bind = at(6, bindRequest({ id: "bind", pod: "p0", node: "n0", gpus: 1 }));
    expect(await run(evict)).toMatchObject({ bindRequest: "evict", ok: true });
    expect(await run(bind)).toEqual({
      bindRequest: "bind",
      ok: false,
      message: "superseded: a request for pod p0 decided later (generation 7 > 6) was carried out first",
    });
    expect(executed).toEqual(["evict"]);
    expect(backend.cluster.runningPodCount).toBe(0);
  });

  it("carries out one pod's requests one at a time, in the order they come; other pods are not held up", async () => {
    const { backend, run, executed } = setup();
    const bind = at(5, bindRequest({ id: "bind", pod: "p0", node: "n0", gpus: 1 }));
    const evict = at(5, bindRequest({ id: "evict", kind: "evict", pod: "p0", node: "n0" }));
    const other = at(4, bindRequest({ id: "other", pod: "p1", node: "n0", gpus: 1 }));
    const results = await Promise.all([run(bind), run(evict), run(other)]);
    expect(results.map((r) => [r.bindRequest, r.ok])).toEqual([
      ["bind", true],
      ["evict", true],
      ["other", true],
    ]);
    expect(executed.indexOf("bind")).toBeLessThan(executed.indexOf("evict"));
    // p0 was bound, then evicted; p1 (another pod, an older generation) still ran.
    expect(backend.cluster.podNode("job-1", "p0")).toBeNull();
    expect(backend.cluster.podNode("job-1", "p1")).toBe("n0");
  });
});
