// BindRequestMessages for tests, as the dispatch worker would produce them.
import {
  type BindRequestMessage,
  bindRequestKey,
  defaultBindSecret,
  type SignedBindRequest,
  signBindRequest,
} from "../../src/protocol/bind-request.js";
import type { RenderJob } from "../../src/render/index.js";

export interface RequestShape {
  id: string;
  kind?: "bind" | "evict" | "delete";
  cluster?: string;
  jobId?: string;
  jobName?: string;
  namespace?: string;
  createdInCluster?: boolean;
  restarts?: number;
  workload?: string | null;
  pod: string;
  node: string;
  cpuMillis?: number;
  memory?: number;
  gpus?: number;
  gpuFraction?: number;
  /** MiB of one device (a GPU-memory request). */
  gpuMemory?: number;
  gpuGroups?: string[];
  gpuDevices?: number[];
  durationSeconds?: number | null;
  exitFailure?: boolean;
  /** The task (default "main", whose template the recording API serves). */
  task?: string;
  reason?: string;
  /** The cluster generation it was decided at (default 1). */
  generation?: number;
}

export const CONTAINER_TEMPLATE = {
  spec: {
    containers: [
      {
        name: "main",
        image: "busybox:1.36",
        command: ["sleep", "3600"],
        resources: { requests: { cpu: "1", memory: "1Gi" } },
      },
    ],
    restartPolicy: "Never",
  },
};

export function bindRequest(shape: RequestShape): BindRequestMessage {
  return {
    id: shape.id,
    kind: shape.kind ?? "bind",
    cluster: shape.cluster ?? "c1",
    generation: shape.generation ?? 1,
    job: {
      id: shape.jobId ?? "job-1",
      name: shape.jobName ?? "train",
      namespace: shape.namespace ?? "team-a",
      queue: "research",
      createdInCluster: shape.createdInCluster ?? false,
      restarts: shape.restarts ?? 0,
      workload: shape.workload ?? null,
    },
    pod: {
      name: shape.pod,
      task: shape.task ?? "main",
      resources: {
        cpuMillis: shape.cpuMillis ?? 1000,
        memory: shape.memory ?? 2 ** 30,
        gpus: shape.gpus ?? 0,
        gpuFraction: shape.gpuFraction ?? 0,
        gpuMemory: shape.gpuMemory ?? 0,
      },
      durationSeconds: shape.durationSeconds === undefined ? 30 : shape.durationSeconds,
      exitFailure: shape.exitFailure ?? false,
    },
    node: shape.node,
    gpuGroups: shape.gpuGroups ?? [],
    gpuDevices: shape.gpuDevices ?? [],
    reason: shape.reason ?? "",
    attempt: 1,
  };
}

/** What the agent renders the request's pod from: its job with one task, named after the pod
 * ("<task>-<i>"), of the request's resources and `template` (null: none). */
export function renderJobFor(request: BindRequestMessage, template: unknown): RenderJob {
  const dash = request.pod.name.lastIndexOf("-");
  const task = dash > 0 ? request.pod.name.slice(0, dash) : request.pod.name;
  const index = dash > 0 ? Number(request.pod.name.slice(dash + 1)) : 0;
  return {
    id: request.job.id,
    name: request.job.name,
    namespace: request.job.namespace,
    queue: request.job.queue,
    minMember: index + 1,
    rendezvousPort: null,
    tasks: [{ name: task, replicas: index + 1, resources: request.pod.resources, template }],
  };
}

/** The key of `cluster`'s bind requests in tests: the in-process API's (this process's secret),
 * which the recording API serves too. */
export function testBindKey(cluster = "c1"): string {
  return bindRequestKey(defaultBindSecret(), cluster);
}

/** A message as the dispatch worker puts it on the queue: signed with its cluster's key. */
export function signed(message: BindRequestMessage, cluster = message.cluster): SignedBindRequest {
  return signBindRequest(message, testBindKey(cluster));
}
