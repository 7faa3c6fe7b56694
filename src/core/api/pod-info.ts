// A pod as the session sees it: its spec plus mutable placement state.
import { TaskRequest } from "./resources.js";
import type { PodSpec, PodStatus } from "./spec.js";

export const DEFAULT_SUB_GROUP = "default";

export type ReceivedType = "none" | "regular" | "fraction" | "mig";

export class PodInfo {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly jobUid: string;
  readonly subGroup: string;
  readonly req: TaskRequest;
  readonly spec: PodSpec;
  /** Creation order key: createdAt, or +Infinity when unknown. */
  readonly createdAt: number;

  status: PodStatus;
  nodeName: string | null;
  gpuGroups: string[];
  /** Status was set inside this session by a statement (KAI: IsVirtualStatus). */
  isVirtual = false;
  /** How the GPUs were received on the node the pod was last added to. */
  receivedType: ReceivedType = "none";
  /** GPU share accepted on the node it was last added to (survives rollback, like KAI's AcceptedResource). */
  acceptedGpus = 0;
  /** Whether `accepted*` has ever been set (a pod never placed has an empty accepted resource). */
  hasAccepted = false;
  acceptedCpu = 0;
  acceptedMemory = 0;
  /** GPU memory (MiB) per device on the node it was accepted on (shared pods). */
  acceptedGpuMemory = 0;

  constructor(spec: PodSpec, jobUid: string) {
    this.spec = spec;
    this.uid = spec.uid;
    this.name = spec.name;
    this.namespace = spec.namespace;
    this.jobUid = jobUid;
    this.subGroup = spec.subGroup || DEFAULT_SUB_GROUP;
    this.req = new TaskRequest(spec.request);
    this.createdAt = spec.createdAt ?? Number.POSITIVE_INFINITY;
    this.status = spec.status;
    this.nodeName = spec.node;
    this.gpuGroups = [...spec.gpuGroups];
  }

  /** Shared-GPU placement (fraction or GPU memory) as received on its node. */
  get isSharedAllocation(): boolean {
    return this.receivedType === "fraction";
  }

  /** A task the allocation may (re)place: Pending, or, in simulations, evicted in this statement. */
  shouldAllocate(realAllocation: boolean): boolean {
    return this.status === "Pending" || (!realAllocation && this.status === "Releasing" && this.isVirtual);
  }
}
