// A LOST cluster comes back only with a complete node report. An agent that never failed a
// report round (its reports kept arriving, only too slowly: the cluster went LOST meanwhile)
// sends partial reports and heartbeats only; those are refused, naming the field, so that its
// next round is complete — otherwise the cluster stays LOST for good with its agent alive and
// every job sent elsewhere or left waiting.
import { afterAll, beforeAll, expect, it } from "vitest";
import { ConflictError } from "../../src/store/errors.js";
import { markLostClusters } from "../../src/store/operations/lost-clusters.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import type { TestStore } from "../helpers/store.js";
import { agentOfC1, clusterOf, generationOfC1, gpuNode, storeWithC1 } from "./fixtures.js";

let t: TestStore;

beforeAll(async () => {
  t = await storeWithC1();
});
afterAll(async () => t?.close());

const stateOfC1 = async () => (await clusterOf(t, "c1")).state;

it("refuses a partial report or heartbeat from a LOST cluster, and takes it back on a complete one", async () => {
  await markLostClusters(
    t.store,
    { name: "workers" },
    { now: new Date(Date.now() + 600_000), lostAfterMs: 60_000 },
  );
  expect(await stateOfC1()).toBe("LOST");
  const generation = await generationOfC1(t);

  for (const nodes of [[], [gpuNode("n1", 8)]]) {
    const err = await reportNodes(t.store, agentOfC1, { cluster: "c1", complete: false, nodes }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).field).toBe("complete");
    expect((err as Error).message).toBe("cluster c1 is LOST: only a complete node report brings it back");
    expect(await stateOfC1()).toBe("LOST");
    expect(await generationOfC1(t)).toBe(generation);
  }

  await reportNodes(t.store, agentOfC1, { cluster: "c1", complete: true, nodes: [gpuNode("n1", 8)] });
  expect(await stateOfC1()).toBe("READY");
  await reportNodes(t.store, agentOfC1, { cluster: "c1", complete: false, nodes: [] });
  expect(await stateOfC1()).toBe("READY");
});
