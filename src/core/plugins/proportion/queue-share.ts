// Per-queue, per-resource quantities the proportion plugin works with (KAI:
// plugins/proportion/resource_share). -1 means unlimited in deserved and limit.
import type { QueueInfo } from "../../api/queue-info.js";
import type { QuotaVector } from "../../api/spec.js";

export const UNLIMITED = -1;
export const RESOURCES = ["cpu", "memory", "gpu"] as const;
export type ResourceName = (typeof RESOURCES)[number];
export type Quantities = Record<ResourceName, number>;

export const zero = (): Quantities => ({ cpu: 0, memory: 0, gpu: 0 });

export function fromQuota(q: QuotaVector): Quantities {
  return { cpu: q.cpuMillis, memory: q.memory, gpu: q.gpu };
}

export function toQuota(q: Quantities): QuotaVector {
  return { gpu: q.gpu, cpuMillis: q.cpu, memory: q.memory };
}

/** Strictly less in every resource. */
export function lessEverywhere(a: Quantities, b: Quantities): boolean {
  return RESOURCES.every((r) => a[r] < b[r]);
}

function cmp(a: number, b: number): number {
  if (a === UNLIMITED) return b === UNLIMITED ? 0 : 1;
  if (b === UNLIMITED) return -1;
  return a > b ? 1 : a < b ? -1 : 0;
}

/** ≤ in every resource, -1 counting as unlimited. */
export function lessEqual(a: Quantities, b: Quantities): boolean {
  return RESOURCES.every((r) => cmp(a[r], b[r]) <= 0);
}

export class ResourceShare {
  deserved = 0;
  fairShare = 0;
  maxAllowed = UNLIMITED;
  overQuotaWeight = 0;
  allocated = 0;
  allocatedNotPreemptible = 0;
  request = 0;
  /** Decayed recent usage as a fraction of the cluster's capacity. */
  usage = 0;

  clone(): ResourceShare {
    return Object.assign(new ResourceShare(), this);
  }

  /** What the queue could use: its request, capped by its limit. */
  requestable(): number {
    return this.maxAllowed === UNLIMITED ? this.request : Math.min(this.maxAllowed, this.request);
  }

  /** `amount` over allocatable (the cluster's `total` when unlimited); ×1000 when nothing is allocatable. */
  shareOf(amount: number, total: number): number {
    let a = this.allocatable();
    if (a === UNLIMITED) a = total;
    return a === 0 ? amount * 1000 : amount / a;
  }

  /** max(deserved, fair share) capped by the limit; the limit when deserved is unlimited. */
  allocatable(): number {
    if (this.deserved === UNLIMITED) return this.maxAllowed;
    let a = Math.max(this.deserved, this.fairShare);
    if (this.maxAllowed !== UNLIMITED) a = Math.min(this.maxAllowed, a);
    return a;
  }
}

export class QueueShare {
  readonly shares: Record<ResourceName, ResourceShare> = {
    cpu: new ResourceShare(),
    memory: new ResourceShare(),
    gpu: new ResourceShare(),
  };

  constructor(readonly queue: QueueInfo) {}

  get name(): string {
    return this.queue.name;
  }

  get parent(): string | null {
    return this.queue.parent;
  }

  clone(): QueueShare {
    const c = new QueueShare(this.queue);
    for (const r of RESOURCES) c.shares[r] = this.shares[r].clone();
    return c;
  }

  private map(f: (s: ResourceShare) => number): Quantities {
    return { cpu: f(this.shares.cpu), memory: f(this.shares.memory), gpu: f(this.shares.gpu) };
  }

  fairShare(): Quantities {
    return this.map((s) => s.fairShare);
  }
  allocated(): Quantities {
    return this.map((s) => s.allocated);
  }
  allocatedNotPreemptible(): Quantities {
    return this.map((s) => s.allocatedNotPreemptible);
  }
  deserved(): Quantities {
    return this.map((s) => s.deserved);
  }
  maxAllowed(): Quantities {
    return this.map((s) => s.maxAllowed);
  }
  request(): Quantities {
    return this.map((s) => s.request);
  }
  allocatable(): Quantities {
    return this.map((s) => s.allocatable());
  }

  /** Largest allocated / allocatable ratio over the resources (a resource with no allocatable share weighs ×1000). */
  dominantShare(total: Quantities): number {
    // Spelled out per resource: queue order asks this on every comparison.
    const { cpu, memory, gpu } = this.shares;
    const d = Math.max(0, cpu.shareOf(cpu.allocated, total.cpu));
    return Math.max(
      Math.max(d, memory.shareOf(memory.allocated, total.memory)),
      gpu.shareOf(gpu.allocated, total.gpu),
    );
  }
}
