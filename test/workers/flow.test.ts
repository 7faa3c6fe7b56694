// Jobs submitted through GraphQL end Running on the right cluster, placed by the workers' cycles
// and carried out by the simulated agents; admission picks clusters by selector and fit; a gang is
// all or nothing; a job that fits nowhere stays Pending with a reason per cluster.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../agent/until.js";
import { ControlPlane, gpuJob } from "./harness.js";

const US = `
nodeGroups:
  - { name: a100, count: 2, cpu: 64, memory: 512Gi, gpus: 4, gpuModel: A100, gpuMemoryMiB: 81920 }
`;
const EU = `
nodeGroups:
  - { name: h100, count: 2, cpu: 64, memory: 512Gi, gpus: 8, gpuModel: H100, gpuMemoryMiB: 81920 }
`;

let cp: ControlPlane;

beforeAll(async () => {
  cp = await ControlPlane.start();
  await cp.createQueue("team-a");
  await cp.addCluster("us1", US, { region: "us" });
  await cp.addCluster("eu1", EU, { region: "eu" });
  await cp.startWorkers({ logIdleCycles: true });
}, 180_000); // the API, agents and workers start beside every other test file
afterAll(async () => cp?.close());

const running = (pods: { state: string }[]) => pods.every((p) => p.state === "RUNNING");

describe("workers end to end", () => {
  it("runs a job on the cluster it names", async () => {
    const id = await cp.submit({ ...gpuJob("named", "team-a", 2, 1), cluster: "us1" });
    const job = await until(async () => {
      const j = await cp.job(id);
      expect(j.state).toBe("RUNNING");
      return j;
    });
    expect(job.cluster?.name).toBe("us1");
    expect(running(job.pods)).toBe(true);
    expect(job.pods.every((p) => p.node?.startsWith("a100-"))).toBe(true);
    expect(cp.backends.get("us1")!.cluster.runningPodCount).toBe(2);
  });

  it("admits a job that names no cluster to one that matches its selector", async () => {
    const id = await cp.submit(
      gpuJob("eu-only", "team-a", 2, 2, { clusterSelector: [{ key: "region", values: ["eu"] }] }),
    );
    const job = await until(async () => {
      const j = await cp.job(id);
      expect(j.state).toBe("RUNNING");
      return j;
    });
    expect(job.cluster?.name).toBe("eu1");
    expect(job.pods.every((p) => p.node?.startsWith("h100-"))).toBe(true);
    const assigned = (await cp.events("job.assigned")).filter((e) => e.job === id);
    expect(assigned).toHaveLength(1);
    expect(assigned[0]!.message).toMatch(/assigned to cluster eu1: the gang fits now/);
  });

  it("sends a job that fits only one cluster's nodes there", async () => {
    // 8 GPUs in one pod: only the H100 nodes have 8.
    const id = await cp.submit(gpuJob("big-pod", "team-a", 1, 8));
    const job = await until(async () => {
      const j = await cp.job(id);
      expect(j.state).toBe("RUNNING");
      return j;
    });
    expect(job.cluster?.name).toBe("eu1");
  });

  it("keeps a job that fits nowhere Pending, with what each cluster lacks", async () => {
    const id = await cp.submit(gpuJob("too-big", "team-a", 1, 16));
    const job = await until(async () => {
      const j = await cp.job(id);
      expect(j.pendingReason?.clusters).toHaveLength(2);
      return j;
    });
    expect(job.state).toBe("PENDING");
    expect(job.cluster).toBeNull();
    expect(job.pendingReason!.message).toMatch(/no cluster can run the gang now/);
    for (const c of job.pendingReason!.clusters) expect(c.message).toMatch(/can never fit/);
    await cp.admin("mutation($id: ID!) { cancelJob(id: $id) { state } }", { id });
  });

  it("places a gang all or nothing", async () => {
    // us1 has 8 GPUs; 2 are taken by "named". Fill 4 more, leaving 2 free.
    const filler = await cp.submit({ ...gpuJob("filler", "team-a", 1, 4), cluster: "us1" });
    await until(async () => expect((await cp.job(filler)).state).toBe("RUNNING"));
    // A gang of two 2-GPU pods: one would fit, both do not.
    const submittedAt = Date.now();
    const gang = await cp.submit({ ...gpuJob("gang", "team-a", 2, 2), cluster: "us1" });
    await until(async () => {
      const j = await cp.job(gang);
      expect(j.pendingReason?.message).toMatch(/us1:/);
    });
    // The cycle that found no room for the whole gang has completed (later ones are skipped while
    // nothing changes), and still nothing of the gang is placed.
    await until(async () =>
      expect((await cp.events("cycle.completed")).some((e) => new Date(e.at).getTime() > submittedAt)).toBe(
        true,
      ),
    );
    for (let i = 0; i < 5; i++) {
      const j = await cp.job(gang);
      expect(j.pods.map((p) => p.state)).toEqual(["PENDING", "PENDING"]);
      await new Promise((r) => setTimeout(r, 200));
    }
    // Room for both: the whole gang runs.
    await cp.admin("mutation($id: ID!) { cancelJob(id: $id) { state } }", { id: filler });
    const j = await until(async () => {
      const v = await cp.job(gang);
      expect(v.state).toBe("RUNNING");
      return v;
    });
    expect(running(j.pods)).toBe(true);
  });
});
