// Checks a BullMQ job's data before the agent acts on it: producers are other processes,
// possibly of another version, and a malformed message must fail loudly, not half-execute.
import { z } from "zod";
import type { BindRequestMessage } from "../protocol/bind-request.js";

const resources = z.object({
  cpuMillis: z.number(),
  memory: z.number(),
  gpus: z.number(),
  gpuFraction: z.number(),
  gpuMemory: z.number(),
});

const bindRequestSchema = z
  .object({
    id: z.string().min(1),
    kind: z.enum(["bind", "evict", "delete"]),
    cluster: z.string().min(1),
    generation: z.number(),
    job: z.object({
      id: z.string().min(1),
      name: z.string(),
      namespace: z.string(),
      queue: z.string(),
      // Absent in messages of a producer from before unique pod names.
      createdInCluster: z.boolean().default(false),
      // Absent in messages of a producer from before gang restarts: the first attempt.
      restarts: z.int().min(0).default(0),
      // Absent in messages of a producer from before workloads: the agent creates the pods.
      workload: z.string().nullable().default(null),
    }),
    pod: z.object({
      name: z.string().min(1),
      task: z.string().min(1),
      resources,
      durationSeconds: z.number().nullable(),
      exitFailure: z.boolean(),
    }),
    // "" for a workload's deletion, which is about no node.
    node: z.string(),
    gpuGroups: z.array(z.string()),
    // Absent in messages of a producer from before device topology: no devices chosen.
    gpuDevices: z.array(z.int().min(0)).default([]),
    reason: z.string(),
    attempt: z.number(),
  })
  .refine((r) => r.kind === "delete" || r.node !== "", {
    path: ["node"],
    message: "a bind or eviction names its node",
  });

export function parseBindRequest(data: unknown): BindRequestMessage {
  const result = bindRequestSchema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new Error(
      `malformed BindRequestMessage: field ${issue.path.join(".") || "(root)"}: ${issue.message}`,
    );
  }
  return result.data as BindRequestMessage;
}
