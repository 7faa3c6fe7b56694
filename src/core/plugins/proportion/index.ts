// proportion: hierarchical fair share. At session open it totals the cluster, counts
// what each queue (and its ancestors) has allocated and requests, and divides the
// capacity top-down into fair shares; it then orders queues, enforces limits and
// non-preemptible quotas, and decides who may reclaim from whom (KAI: plugins/proportion).
import type { PodInfo } from "../../api/pod-info.js";
import type { JobInfo } from "../../api/podgroup-info.js";
import type { QueueShare as QueueShareResult } from "../../api/result.js";
import { isAllocated } from "../../api/status.js";
import type { SessionCarry } from "../../framework/carry/session-carry.js";
import type { PluginArguments } from "../../framework/config.js";
import type { Plugin, Session } from "../../framework/session.js";
import { tasksToAllocateResources } from "../../framework/tasks-to-allocate.js";
import { CapacityPolicy } from "./capacity.js";
import { divideFairShare } from "./fair-share.js";
import { compareQueues } from "./queue-order.js";
import { type Quantities, QueueShare, RESOURCES, fromQuota, toQuota, zero } from "./queue-share.js";
import { Reclaimable } from "./reclaimable.js";

export const name = "proportion";

/** GPU sums live on a 1e-6 grid (shares are hundredths), so adding and removing cancel exactly. */
const onGrid = (x: number) => Math.round(x * 1e6) / 1e6;
const snap = (r: string, x: number) => (r === "gpu" ? onGrid(x) : x);

function numberArg(args: PluginArguments, key: string, dflt: number): number {
  const v = args[key];
  if (v === undefined) return dflt;
  const n = typeof v === "string" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isFinite(n))
    throw new Error(`plugin proportion: argument ${key} must be a number`);
  return n;
}

/** A pod's resources as a queue counts them once placed (its accepted share). */
export function acceptedQuantities(p: PodInfo): Quantities {
  if (!p.hasAccepted) return zero();
  return { cpu: p.acceptedCpu, memory: p.acceptedMemory, gpu: p.acceptedGpus };
}

/** A job's pods summed as countWholeJob adds them, at its session's open. */
interface JobSums {
  /** The GPU memory per GPU they were summed with. */
  minMem: number;
  /** Every amount a whole number (else the sums are not used). */
  whole: boolean;
  aCpu: number;
  aMem: number;
  aGpu: number;
  rCpu: number;
  rMem: number;
  rGpu: number;
}

/**
 * The sums of the job's placed (accepted shares) and pending (requests) pods. They depend only
 * on the job's state at open, so a carry keeps them with the job while it opens alike (see
 * SessionCarry.keptAtOpen): they are summed again only for a job built, changed or placed anew.
 */
export function jobSums(job: JobInfo, minMem: number, carry: SessionCarry | null): JobSums {
  const kept = carry?.keptAtOpen(job) as JobSums | null | undefined;
  if (kept && kept.minMem === minMem) return kept;
  const s: JobSums = {
    minMem,
    whole: false,
    aCpu: 0,
    aMem: 0,
    aGpu: 0,
    rCpu: 0,
    rMem: 0,
    rGpu: 0,
  };
  carry?.keepAtOpen(job, s);
  for (const p of job.pods) {
    if (isAllocated(p.status)) {
      if (!p.hasAccepted) continue;
      const c = p.acceptedCpu;
      const m = p.acceptedMemory;
      const g = p.acceptedGpus;
      if (!Number.isInteger(c) || !Number.isInteger(m) || !Number.isInteger(g)) return s;
      s.aCpu += c;
      s.aMem += m;
      s.aGpu += g;
    } else if (p.status === "Pending") {
      let g = p.req.gpusQuota;
      if (p.req.kind === "memory" && minMem > 0) g += p.req.gpuDevices * (p.req.gpuMemory / minMem);
      const c = p.req.cpu;
      const m = p.req.memory;
      if (!Number.isInteger(c) || !Number.isInteger(m) || !Number.isInteger(g)) return s;
      s.rCpu += c;
      s.rMem += m;
      s.rGpu += g;
    }
  }
  s.whole = true;
  return s;
}

export class ProportionPlugin implements Plugin {
  readonly name = name;
  readonly total: Quantities = zero();
  readonly queues = new Map<string, QueueShare>();
  /** Queue values frozen at the start of a job's reclaim attempt. */
  simulationQueues = new Map<string, QueueShare>();
  private readonly kValue: number;
  private readonly saturationMultiplier: number;

  constructor(args: PluginArguments) {
    this.kValue = Math.max(0, numberArg(args, "kValue", 1));
    this.saturationMultiplier = Math.max(1, numberArg(args, "relcaimerSaturationMultiplier", 1));
  }

  onSessionOpen(ssn: Session): void {
    this.countTotal(ssn);
    this.buildQueues(ssn);
    this.countUsage(ssn);
    const top = [...this.queues.values()].filter((q) => !q.parent);
    divideFairShare(this.total, this.kValue, top, (q) =>
      q.queue.children.map((c) => this.queues.get(c)!).filter(Boolean),
    );
    this.register(ssn);
  }

  private countTotal(ssn: Session): void {
    for (const n of ssn.nodes) {
      if (!n.spec.ready) continue;
      this.total.cpu += n.allocatable.cpu;
      this.total.memory += n.allocatable.memory;
      this.total.gpu += n.allocatable.gpusWithMig();
    }
  }

  private buildQueues(ssn: Session): void {
    for (const q of ssn.queues.values()) {
      const share = new QueueShare(q);
      const d = fromQuota(q.spec.deserved);
      const l = fromQuota(q.spec.limit);
      const w = fromQuota(q.spec.overQuotaWeight);
      const u = q.spec.usage ? fromQuota(q.spec.usage) : zero();
      for (const r of RESOURCES) {
        const s = share.shares[r];
        s.deserved = d[r];
        s.maxAllowed = l[r];
        s.overQuotaWeight = w[r];
        s.usage = u[r];
      }
      this.queues.set(q.name, share);
    }
  }

  private readonly chains = new Map<string, QueueShare[]>();

  /** The queue and its ancestors, leaf first. */
  private chain(queue: string): QueueShare[] {
    let c = this.chains.get(queue);
    if (!c) {
      c = [];
      for (let q = this.queues.get(queue); q; q = q.parent ? this.queues.get(q.parent) : undefined) c.push(q);
      this.chains.set(queue, c);
    }
    return c;
  }

  private countUsage(ssn: Session): void {
    for (const q of ssn.queues.values()) {
      const held = q.spec.heldElsewhere;
      if (!held) continue;
      const all = fromQuota(held.allocated);
      const notPreemptible = fromQuota(held.allocatedNotPreemptible);
      for (const c of this.chain(q.name))
        for (const r of RESOURCES) {
          const s = c.shares[r];
          s.allocated = snap(r, s.allocated + all[r]);
          s.request = snap(r, s.request + all[r]);
          s.allocatedNotPreemptible = snap(r, s.allocatedNotPreemptible + notPreemptible[r]);
        }
    }
    const minMem = ssn.params.minNodeGpuMemory;
    for (const job of ssn.jobs.values()) {
      const chain = this.chain(job.queue);
      if (!this.countWholeJob(job, chain, minMem, ssn.carry)) this.countJobPods(job, chain, minMem);
    }
  }

  /** Adds the job's pods to its queues one by one. */
  private countJobPods(job: JobInfo, chain: readonly QueueShare[], minMem: number): void {
    for (const p of job.pods) {
      if (isAllocated(p.status)) {
        // Every pod of the cluster, every queue above it: the three resources spelled out.
        const cpu = p.hasAccepted ? p.acceptedCpu : 0;
        const memory = p.hasAccepted ? p.acceptedMemory : 0;
        const gpu = p.hasAccepted ? p.acceptedGpus : 0;
        for (const q of chain) {
          const { cpu: c, memory: m, gpu: g } = q.shares;
          c.allocated += cpu;
          c.request += cpu;
          m.allocated += memory;
          m.request += memory;
          g.allocated = onGrid(g.allocated + gpu);
          g.request = onGrid(g.request + gpu);
          if (!job.preemptible) {
            c.allocatedNotPreemptible += cpu;
            m.allocatedNotPreemptible += memory;
            g.allocatedNotPreemptible = onGrid(g.allocatedNotPreemptible + gpu);
          }
        }
      } else if (p.status === "Pending") {
        const res: Quantities = { cpu: p.req.cpu, memory: p.req.memory, gpu: p.req.gpusQuota };
        if (p.req.kind === "memory" && minMem > 0) res.gpu += p.req.gpuDevices * (p.req.gpuMemory / minMem);
        for (const q of chain)
          for (const r of RESOURCES) q.shares[r].request = snap(r, q.shares[r].request + res[r]);
      }
    }
  }

  /**
   * Adds the job's pods to its queues as one sum per amount, when that gives exactly what adding
   * them one by one gives: every amount a whole number and every sum a safe integer (GPUs within
   * the grid's exact range), so no partial sum is ever rounded. Returns false, having changed
   * nothing, otherwise.
   */
  private countWholeJob(
    job: JobInfo,
    chain: readonly QueueShare[],
    minMem: number,
    carry: SessionCarry | null,
  ): boolean {
    const sums = jobSums(job, minMem, carry);
    if (!sums.whole) return false;
    const { aCpu, aMem, aGpu, rCpu, rMem, rGpu } = sums;
    const safe = Number.isSafeInteger;
    const gpuSafe = (x: number) => safe(x) && x >= 0 && x <= 1e9;
    for (const q of chain) {
      const { cpu: c, memory: m, gpu: g } = q.shares;
      if (!safe(c.allocated) || !safe(c.request) || !safe(m.allocated) || !safe(m.request)) return false;
      if (!gpuSafe(g.allocated) || !gpuSafe(g.request)) return false;
      if (!safe(c.allocated + aCpu) || !safe(c.request + aCpu + rCpu)) return false;
      if (!safe(m.allocated + aMem) || !safe(m.request + aMem + rMem)) return false;
      if (!gpuSafe(g.allocated + aGpu) || !gpuSafe(g.request + aGpu + rGpu)) return false;
      if (!job.preemptible) {
        if (!safe(c.allocatedNotPreemptible) || !safe(c.allocatedNotPreemptible + aCpu)) return false;
        if (!safe(m.allocatedNotPreemptible) || !safe(m.allocatedNotPreemptible + aMem)) return false;
        if (!gpuSafe(g.allocatedNotPreemptible) || !gpuSafe(g.allocatedNotPreemptible + aGpu)) return false;
      }
    }
    for (const q of chain) {
      const { cpu: c, memory: m, gpu: g } = q.shares;
      c.allocated += aCpu;
      c.request += aCpu + rCpu;
      m.allocated += aMem;
      m.request += aMem + rMem;
      g.allocated += aGpu;
      g.request += aGpu + rGpu;
      if (!job.preemptible) {
        c.allocatedNotPreemptible += aCpu;
        m.allocatedNotPreemptible += aMem;
        g.allocatedNotPreemptible += aGpu;
      }
    }
    return true;
  }

  private readonly none = zero();

  /**
   * The resources of the job's next attempt, as queue order and reclaim count them (do not
   * modify). Cached with the job's task list until one of its pods changes status.
   */
  jobRequest(ssn: Session, job: JobInfo | null): Quantities {
    return job ? tasksToAllocateResources(ssn, job, false) : this.none;
  }

  private onPlaced(ssn: Session, task: PodInfo, sign: 1 | -1): void {
    if (!task.hasAccepted) return;
    const job = ssn.jobOf(task);
    const cpu = sign * task.acceptedCpu;
    const mem = sign * task.acceptedMemory;
    const gpu = sign * task.acceptedGpus;
    for (const q of this.chain(job.queue)) {
      const sh = q.shares;
      sh.cpu.allocated += cpu;
      sh.memory.allocated += mem;
      sh.gpu.allocated = onGrid(sh.gpu.allocated + gpu);
      if (!job.preemptible) {
        sh.cpu.allocatedNotPreemptible += cpu;
        sh.memory.allocatedNotPreemptible += mem;
        sh.gpu.allocatedNotPreemptible = onGrid(sh.gpu.allocatedNotPreemptible + gpu);
      }
    }
  }

  private register(ssn: Session): void {
    const capacity = new CapacityPolicy((q) => this.chain(q));
    const reclaimable = new Reclaimable(this, ssn, this.saturationMultiplier);
    ssn.queueOrderFns.push((lq, rq, lJob, rJob, lVictims, rVictims) => {
      const l = this.queues.get(lq.name);
      const r = this.queues.get(rq.name);
      if (!l) return 1;
      if (!r) return -1;
      const lReq = this.jobRequest(ssn, lJob);
      const rReq = this.jobRequest(ssn, rJob);
      return compareQueues(l, r, lReq, rReq, lVictims, rVictims, this.total);
    });
    const quota = (tasks: readonly PodInfo[]): Quantities => {
      const q = zero();
      for (const t of tasks) {
        q.gpu += t.req.gpusQuota;
        q.cpu += t.req.cpu;
        q.memory += t.req.memory;
      }
      return q;
    };
    ssn.jobCapacityFns.push((job, tasks) => capacity.check(job, quota(tasks)));
    ssn.nonPreemptibleOverQuotaFns.push((job, tasks) => capacity.checkNonPreemptibleQuota(job, quota(tasks)));
    const onNode: Quantities = zero();
    ssn.taskOnNodeCapacityFns.push((task, job, node) => {
      onNode.gpu =
        task.req.kind === "mig" ? task.req.gpusQuota : node.memoryShare(node.requestGpuMemory(task.req));
      onNode.cpu = task.req.cpu;
      onNode.memory = task.req.memory;
      return capacity.check(job, onNode);
    });
    ssn.eventHandlers.push({
      allocate: (t) => this.onPlaced(ssn, t, 1),
      deallocate: (t) => this.onPlaced(ssn, t, -1),
    });
    ssn.canReclaimFns.push((job) => reclaimable.canReclaim(job));
    ssn.reclaimMustMoveFns.push((p, v, evicted) => !reclaimable.mayTakeFrom(p, v, evicted));
    ssn.reclaimValidatorFns.push((s) => reclaimable.reclaimable(s));
    ssn.onJobSolutionStartFns.push(() => {
      this.simulationQueues = new Map([...this.queues].map(([k, v]) => [k, v.clone()]));
    });
    ssn.queueSharesFn = () => this.shares();
  }

  shares(): QueueShareResult[] {
    return [...this.queues.values()].map((q) => ({
      queue: q.name,
      deserved: toQuota(q.deserved()),
      fairShare: toQuota(q.fairShare()),
      allocated: toQuota(q.allocated()),
      requested: toQuota(q.request()),
      limit: toQuota(q.maxAllowed()),
    }));
  }
}

export function create(args: PluginArguments = {}): Plugin {
  return new ProportionPlugin(args);
}
