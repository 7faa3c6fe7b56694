// Small builders shared by the store tests.
import type { SubmitJobInput } from "../../src/store/validation/submit-job.js";

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
