// A pod as the session sees it: its spec plus mutable placement state.
import { TaskRequest, type TaskRequests } from "./resources.js";
import type { PodSpec, PodStatus } from "./spec.js";

export const DEFAULT_SUB_GROUP = "default";
/** Shared by every pod without GPU groups (never mutated: groups are always replaced whole). */
const NO_GROUPS: string[] = [];
const NO_DEVICES: number[] = [];

/** Spec fields that restrict or steer where a pod may go (besides its request and labels). */
export const CONSTRAINT_FIELDS = [
  "nodeNames",
  "nodeSelector",
  "tolerations",
  "podAffinity",
  "podAntiAffinity",
  "gpuModels",
  "preferredGpuModels",
  "legacyMig",
] as const satisfies readonly (keyof PodSpec)[];

/** Spec fields (besides request and labels) that can change how nodes score or fit a pod. */
const SHAPE_FIELDS = [...CONSTRAINT_FIELDS, "nominatedNode"] as const satisfies readonly (keyof PodSpec)[];

function isEmptyObject(o: object | undefined): boolean {
  if (!o) return true;
  for (const _ in o) return false;
  return true;
}

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

  status!: PodStatus;
  nodeName!: string | null;
  gpuGroups!: string[];
  /** Devices held on nodes that report them (whole-GPU pods). */
  gpuDevices!: number[];
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

  /** `requests`: one TaskRequest for pods of equal requests (memos key on the request object). */
  constructor(spec: PodSpec, jobUid: string, requests?: TaskRequests) {
    this.spec = spec;
    this.uid = spec.uid;
    this.name = spec.name;
    this.namespace = spec.namespace;
    this.jobUid = jobUid;
    this.subGroup = spec.subGroup || DEFAULT_SUB_GROUP;
    this.req = requests ? requests.of(spec.request) : new TaskRequest(spec.request);
    this.createdAt = spec.createdAt ?? Number.POSITIVE_INFINITY;
    this.reset();
  }

  /** Every mutable field as the spec gives it: when built, and when carried into the next
   * session (where its node adds it again). */
  reset(): void {
    const spec = this.spec;
    this.status = spec.status;
    this.nodeName = spec.node;
    this.gpuGroups = spec.gpuGroups.length ? [...spec.gpuGroups] : NO_GROUPS;
    this.gpuDevices = spec.gpuDevices?.length ? [...spec.gpuDevices] : NO_DEVICES;
    this.isVirtual = false;
    this.receivedType = "none";
    this.acceptedGpus = 0;
    this.hasAccepted = false;
    this.acceptedCpu = 0;
    this.acceptedMemory = 0;
    this.acceptedGpuMemory = 0;
  }

  private shapeKey: string | null = null;

  /** Everything of the spec but identity and state: pods with equal keys score nodes alike. */
  get shape(): string {
    if (this.shapeKey === null) {
      const s = this.spec;
      const r = s.request;
      let k = `${r.cpuMillis}|${r.memory}|${r.gpus}|${r.gpuFraction}|${r.gpuMemory}`;
      // The rarely used fields are spelled out only when present, keeping the common key short.
      if (!isEmptyObject(r.mig)) k += `|mig=${JSON.stringify(r.mig)}`;
      if (!isEmptyObject(r.extended)) k += `|ext=${JSON.stringify(r.extended)}`;
      if (!isEmptyObject(s.labels)) k += `|labels=${JSON.stringify(s.labels)}`;
      for (const f of SHAPE_FIELDS) {
        const v = s[f];
        if (v === undefined || v === null || v === false || (Array.isArray(v) && v.length === 0)) continue;
        k += `|${f}=${JSON.stringify(v)}`;
      }
      this.shapeKey = k;
    }
    return this.shapeKey;
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
