// Resource arithmetic for nodes and pods.
//
// A node's accounting vector (`Resource`) holds whole GPUs only; shared (fractional /
// GPU-memory) devices are tracked per GPU group by the node itself. A pod's request
// (`TaskRequest`) knows which of the four GPU kinds it asks for.
import type { PodRequest } from "./spec.js";

export const MIG_PREFIX = "nvidia.com/mig-";
/** Smallest GPU portion the accounting distinguishes (KAI rounds portions to 1/100). */
const GPU_PORTION_STEP = 100;

export function isMigResource(name: string): boolean {
  return name.startsWith(MIG_PREFIX);
}

/** "nvidia.com/mig-3g.20gb" → {gpus: 3, memoryGb: 20}; null when malformed. */
export function migProfile(name: string): { gpus: number; memoryGb: number } | null {
  const m = /^nvidia\.com\/mig-(\d+)g\.(\d+)gb$/.exec(name);
  return m ? { gpus: Number(m[1]), memoryGb: Number(m[2]) } : null;
}

/** Whole-device accounting vector. `scalars` holds MIG instances and extended resources. */
export class Resource {
  constructor(
    public cpu = 0,
    public memory = 0,
    public gpus = 0,
    public pods = 0,
    public scalars: Map<string, number> | null = null,
  ) {}

  clone(): Resource {
    return new Resource(
      this.cpu,
      this.memory,
      this.gpus,
      this.pods,
      this.scalars ? new Map(this.scalars) : null,
    );
  }

  add(o: Resource): this {
    this.cpu += o.cpu;
    this.memory += o.memory;
    this.gpus += o.gpus;
    this.pods += o.pods;
    if (o.scalars) for (const [k, v] of o.scalars) this.addScalar(k, v);
    return this;
  }

  sub(o: Resource): this {
    this.cpu -= o.cpu;
    this.memory -= o.memory;
    this.gpus -= o.gpus;
    this.pods -= o.pods;
    if (o.scalars) for (const [k, v] of o.scalars) this.addScalar(k, -v);
    return this;
  }

  scalar(name: string): number {
    return this.scalars?.get(name) ?? 0;
  }

  addScalar(name: string, v: number): void {
    if (v === 0) return;
    this.scalars ??= new Map();
    const next = (this.scalars.get(name) ?? 0) + v;
    if (next === 0) this.scalars.delete(name);
    else this.scalars.set(name, next);
  }

  /** GPUs including the devices held by MIG instances (a `3g.20gb` instance counts 3). */
  gpusWithMig(): number {
    let g = this.gpus;
    if (this.scalars)
      for (const [k, v] of this.scalars) {
        const p = isMigResource(k) ? migProfile(k) : null;
        if (p) g += p.gpus * v;
      }
    return g;
  }
}

const NONE: [string, number][] = [];

function nonZero(o: Record<string, number> | undefined): [string, number][] {
  if (!o) return NONE;
  let out: [string, number][] | null = null;
  for (const k in o) {
    const v = o[k]!;
    if (v > 0) {
      out ??= [];
      out.push([k, v]);
    }
  }
  return out ?? NONE;
}

export type GpuRequestKind = "none" | "regular" | "fraction" | "memory" | "mig";

type Level<T> = Map<number, T>;

function hasKeys(o: Record<string, number> | undefined): boolean {
  if (o) for (const _ in o) return true;
  return false;
}

/** The map under `k`, created when missing (no closure per call: this runs for every pod of a snapshot). */
function level<T>(m: Level<Level<T>>, k: number): Level<T> {
  let v = m.get(k);
  if (v === undefined) {
    v = new Map();
    m.set(k, v);
  }
  return v;
}

/** One TaskRequest per distinct request: requests are immutable, and most pods share one. */
export class TaskRequests {
  private readonly interned = new Map<string, TaskRequest>();
  /** The common request (no MIG, no extended resource) by its five numbers, without building a key string. */
  private readonly plain: Level<Level<Level<Level<Level<TaskRequest>>>>> = new Map();
  private plainCount = 0;

  of(r: PodRequest): TaskRequest {
    if (!hasKeys(r.mig) && !hasKeys(r.extended)) {
      const byGpuMemory = level(
        level(level(level(this.plain, r.cpuMillis), r.memory), r.gpus),
        r.gpuFraction,
      );
      let t = byGpuMemory.get(r.gpuMemory);
      if (!t) {
        if (this.plainCount++ > 100_000) {
          this.plain.clear();
          this.plainCount = 0;
        }
        t = new TaskRequest(r);
        byGpuMemory.set(r.gpuMemory, t);
      }
      return t;
    }
    let k = `${r.cpuMillis}|${r.memory}|${r.gpus}|${r.gpuFraction}|${r.gpuMemory}`;
    if (r.mig) for (const m in r.mig) k += `|m:${m}=${r.mig[m]}`;
    if (r.extended) for (const e in r.extended) k += `|e:${e}=${r.extended[e]}`;
    let t = this.interned.get(k);
    if (!t) {
      t = new TaskRequest(r);
      if (this.interned.size > 100_000) this.interned.clear();
      this.interned.set(k, t);
    }
    return t;
  }
}

/** What one pod asks for, normalised for the scheduler. */
export class TaskRequest {
  readonly cpu: number;
  readonly memory: number;
  readonly pods = 1;
  /** Whole devices for regular requests; number of shared devices for fraction/memory requests. */
  readonly gpuDevices: number;
  /** Portion of each device: 1 for regular, 0 < p < 1 for a fraction, 0 for memory/MIG. */
  readonly gpuPortion: number;
  /** MiB per device for memory requests. */
  readonly gpuMemory: number;
  readonly mig: Map<string, number> | null;
  readonly extended: Map<string, number> | null;
  readonly kind: GpuRequestKind;

  constructor(r: PodRequest) {
    this.cpu = r.cpuMillis;
    this.memory = r.memory;
    const migEntries = nonZero(r.mig);
    const ext = nonZero(r.extended);
    this.extended = ext.length ? new Map(ext) : null;
    if (migEntries.length) {
      this.kind = "mig";
      this.mig = new Map(migEntries);
      this.gpuDevices = 0;
      this.gpuPortion = 0;
      this.gpuMemory = 0;
    } else if (r.gpuFraction > 0 && r.gpuFraction < 1) {
      // A fraction given together with memory wins over the memory.
      this.kind = "fraction";
      this.mig = null;
      this.gpuDevices = 1;
      this.gpuPortion = r.gpuFraction;
      this.gpuMemory = 0;
    } else if (r.gpuMemory > 0) {
      this.kind = "memory";
      this.mig = null;
      this.gpuDevices = 1;
      this.gpuPortion = 0;
      this.gpuMemory = r.gpuMemory;
    } else if (r.gpus >= 1) {
      this.kind = "regular";
      this.mig = null;
      this.gpuDevices = Math.floor(r.gpus);
      this.gpuPortion = 1;
      this.gpuMemory = 0;
    } else {
      this.kind = "none";
      this.mig = null;
      this.gpuDevices = 0;
      this.gpuPortion = 0;
      this.gpuMemory = 0;
    }
  }

  /** GPUs as counted against a request: whole count, or the fraction; memory and MIG requests count 0. */
  get gpus(): number {
    return (Math.round(this.gpuPortion * GPU_PORTION_STEP) * this.gpuDevices) / GPU_PORTION_STEP;
  }

  /** GPUs this request takes from a quota: the above plus the devices held by MIG instances. */
  get gpusQuota(): number {
    let g = this.gpus;
    if (this.mig)
      for (const [k, v] of this.mig) {
        const p = migProfile(k);
        if (p) g += p.gpus * v;
      }
    return g;
  }

  get isShared(): boolean {
    return this.kind === "fraction" || this.kind === "memory";
  }

  /** No GPU of any kind. */
  get isCpuOnly(): boolean {
    return !(this.gpus > 0 || this.kind === "memory" || this.kind === "mig");
  }

  /** Best effort: no CPU, memory, GPU or extended request at all (KAI's thresholds). */
  get isEmpty(): boolean {
    if (this.gpus > 0.01 || this.kind === "memory" || this.mig) return false;
    if (this.cpu >= 10 || this.memory >= 10 * 1024 * 1024) return false;
    if (this.extended) for (const v of this.extended.values()) if (v >= 10) return false;
    return true;
  }

  private vectors: [Resource | null, Resource | null] = [null, null];

  /** The whole-device vector a node accounts for this request (shared GPUs excluded); shared, never mutate it. */
  nodeVectorFor(sharedGpu: boolean): Resource {
    const i = sharedGpu ? 1 : 0;
    let v = this.vectors[i];
    if (!v) {
      v = this.nodeVector();
      if (sharedGpu) v.gpus = 0;
      this.vectors[i] = v;
    }
    return v;
  }

  /** The part of the request a node accounts in its whole-device vector (shared GPUs excluded). */
  nodeVector(): Resource {
    const r = new Resource(this.cpu, this.memory, this.kind === "regular" ? this.gpuDevices : 0, 1);
    if (this.mig) for (const [k, v] of this.mig) r.addScalar(k, v);
    if (this.extended) for (const [k, v] of this.extended) r.addScalar(k, v);
    return r;
  }

  /** Base resources (cpu, memory, pods, extended) fit into `avail`. */
  baseFits(avail: Resource): boolean {
    if (this.cpu > avail.cpu || this.memory > avail.memory || this.pods > avail.pods) return false;
    if (this.extended) for (const [k, v] of this.extended) if (v > avail.scalar(k)) return false;
    return true;
  }

  /** Regular / MIG request fits into `avail` (KAI's LessEqualResource). */
  fitsWhole(avail: Resource): boolean {
    if (!this.baseFits(avail)) return false;
    if (this.gpus > avail.gpus) return false;
    if (this.mig) for (const [k, v] of this.mig) if (v > avail.scalar(k)) return false;
    return true;
  }
}
