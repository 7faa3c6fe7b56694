// Small builders shared by the store tests.
import { registerCluster } from "../../src/store/operations/clusters.js";
import { createQueue } from "../../src/store/operations/queues.js";
import { reportNodes } from "../../src/store/operations/report-nodes.js";
import {
  type Cluster,
  clustersNamed,
  type Job,
  jobById,
  MAX_BIND_REQUESTS_PAGE,
  MAX_PODS_PAGE,
  type Pod,
  podsOfJobs,
  type Store,
  bindRequestsOfJobs,
} from "../../src/store/index.js";
import type { SubmitJobInput } from "../../src/store/validation/submit-job.js";
import { openTestStore, type TestStore } from "../helpers/store.js";

export const admin = { name: "test-admin" };

export function job(overrides: Partial<SubmitJobInput> = {}): SubmitJobInput {
  return {
    name: "train",
    queue: "team-a",
    tasks: [{ name: "worker", replicas: 2, resources: { cpu: 1000, memory: "1Gi", gpu: 1 } }],
    ...overrides,
  };
}

export const gpuNode = (name: string, gpus = 8, labels: { key: string; value: string }[] = []) => ({
  name,
  capacity: { cpu: 64_000, memory: "512Gi", gpu: gpus, gpuMemory: gpus * 81_920 },
  gpuModel: "A100",
  labels,
});

/** The agent of c1, as the store's operations see it. */
export const agentOfC1 = { name: "agent:c1" };

/** A cluster with one node of eight GPUs (n1), reported by its agent. */
export async function addGpuCluster(store: Store, name: string): Promise<void> {
  await registerCluster(store, admin, { name });
  await reportNodes(
    store,
    { name: `agent:${name}` },
    { cluster: name, complete: true, nodes: [gpuNode("n1", 8)] },
  );
}

/** Cluster c1 with one node of eight GPUs (n1), reported by its agent. */
export const addC1 = (store: Store): Promise<void> => addGpuCluster(store, "c1");

/** A fresh store with queue team-a and cluster c1 of one node of eight GPUs (n1). */
export async function storeWithC1(): Promise<TestStore> {
  const t = await openTestStore();
  await createQueue(t.store, admin, { name: "team-a" });
  await addC1(t.store);
  return t;
}

/** c1's fencing generation. */
export async function generationOfC1(t: TestStore): Promise<number> {
  return Number((await clusterOf(t, "c1")).generation);
}

/** A job's row, read as the API reads it. */
export async function jobOf(t: TestStore, id: string): Promise<Job> {
  const j = await jobById(t.store, id);
  if (!j) throw new Error(`no job ${id}`);
  return j;
}

/** A job's pods, task by task in natural name order, read as the API reads them. */
export async function podsOf(t: TestStore, jobId: string): Promise<Pod[]> {
  return (await podsOfJobs(t.store, [jobId], MAX_PODS_PAGE)).get(jobId) ?? [];
}

/** A cluster's row, read as the API reads it. */
export async function clusterOf(t: TestStore, name: string): Promise<Cluster> {
  const [c] = await clustersNamed(t.store, [name]);
  if (!c) throw new Error(`no cluster ${name}`);
  return c;
}

/** A job's bind requests, oldest first, read as the API reads them. */
export async function bindRequestsOf(t: TestStore, jobId: string) {
  return (await bindRequestsOfJobs(t.store, [jobId], MAX_BIND_REQUESTS_PAGE)).get(jobId) ?? [];
}
