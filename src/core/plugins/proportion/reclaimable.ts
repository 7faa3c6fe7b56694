// Who may reclaim from whom (KAI: plugins/proportion/reclaimable): a queue may take
// resources back from a sibling subtree that is over its fair share, or over its
// deserved quota while the reclaimer is within its own; and afterwards the reclaimer
// must not end up more saturated (allocated / fair share) than the queues it took from.
import type { PodInfo } from "../../api/pod-info.js";
import type { JobInfo } from "../../api/podgroup-info.js";
import { isActiveAllocated } from "../../api/status.js";
import type { Scenario, Victim } from "../../framework/scenario.js";
import type { Session } from "../../framework/session.js";
import type { ProportionPlugin } from "./index.js";
import { acceptedQuantities } from "./index.js";
import {
  type Quantities,
  type QueueShare,
  RESOURCES,
  type ResourceName,
  UNLIMITED,
  lessEqual,
  zero,
} from "./queue-share.js";

const add = (a: Quantities, b: Quantities): Quantities => ({
  cpu: a.cpu + b.cpu,
  memory: a.memory + b.memory,
  gpu: a.gpu + b.gpu,
});

function involved(list: Quantities[]): Set<ResourceName> {
  const s = new Set<ResourceName>();
  for (const q of list) for (const r of RESOURCES) if (q[r] > 0) s.add(r);
  return s;
}

export class Reclaimable {
  constructor(
    private readonly prop: ProportionPlugin,
    private readonly ssn: Session,
    private readonly saturationMultiplier: number,
  ) {}

  /** The job's queue, with the job's next attempt added, stays within its fair share (and deserved, if non-preemptible). */
  canReclaim(job: JobInfo): boolean {
    const q = this.prop.queues.get(job.queue);
    if (!q) return false;
    const req = this.prop.jobRequest(this.ssn, job);
    if (!lessEqual(add(q.allocated(), req), q.fairShare())) return false;
    if (job.preemptible) return true;
    return lessEqual(add(q.allocatedNotPreemptible(), req), q.deserved());
  }

  /** The scenario's victims may be taken for its preemptor. */
  reclaimable(s: Scenario): boolean {
    const queues = this.prop.simulationQueues.size ? this.prop.simulationQueues : this.prop.queues;
    const req = this.prop.jobRequest(this.ssn, s.preemptor);
    const byQueue = new Map<string, Quantities[]>();
    // Victims whose pods all still run add no chunk when moved pods are not counted.
    const counted = this.ssn.params.allowConsolidatingReclaim && s.affected ? s.affected : s.victims;
    for (const v of counted) {
      const chunks = this.victimChunks(v);
      if (chunks.length === 0) continue;
      const list = byQueue.get(v.job.queue) ?? [];
      list.push(...chunks);
      byQueue.set(v.job.queue, list);
    }
    const remaining = new Map<string, Quantities>();
    const involvedBy = new Map<string, Set<ResourceName>>();
    const rem = (q: QueueShare) => {
      let v = remaining.get(q.name);
      if (!v) {
        v = q.allocated();
        remaining.set(q.name, v);
      }
      return v;
    };
    for (const [victimQueue, chunks] of byQueue) {
      const [reclaimerSide, victimSide] = leveled(queues, s.preemptor.queue, victimQueue);
      if (!reclaimerSide || !victimSide) return false;
      involvedBy.set(victimQueue, involved(chunks));
      const victimRemaining = rem(victimSide);
      for (const chunk of chunks) {
        if (!fitsStrategy(req, reclaimerSide, victimSide, victimRemaining)) return false;
        for (let q = queues.get(victimQueue); q; q = q.parent ? queues.get(q.parent) : undefined) {
          const r = rem(q);
          for (const k of RESOURCES) r[k] -= chunk[k];
          const mine = involvedBy.get(q.name);
          const from = involvedBy.get(victimQueue)!;
          if (mine) for (const x of from) mine.add(x);
          else involvedBy.set(q.name, new Set(from));
        }
      }
    }
    return this.withinBoundaries(queues, s.preemptor, req, remaining, involvedBy);
  }

  /**
   * Whether `reclaimable` could accept a scenario that evicts at most `evicted` (null:
   * unknown) while a pod of `victim` stays evicted. The checks on the victim's side only
   * get harder as more is taken, so they are tried with the most favourable values: the
   * strategy check against the side's whole allocation; the saturation check with the
   * side having lost only what the victim must lose (a gang is re-placed all or nothing,
   * so all its evicted pods; an elastic job at least its smallest evicted pod) and the
   * reclaimer's side having lost all of `evicted` below it. False means such a victim may only be
   * moved (lets the solvers skip hopeless scenarios without simulating them).
   */
  mayTakeFrom(preemptor: JobInfo, victim: JobInfo, evicted: readonly PodInfo[] | null): boolean {
    const queues = this.prop.simulationQueues.size ? this.prop.simulationQueues : this.prop.queues;
    const memo = this.memoFor(queues);
    const pair = memo.pair(preemptor.queue, victim.queue);
    if (!pair) return false;
    const { reclaimerSide, victimSide } = pair;
    const req = this.prop.jobRequest(this.ssn, preemptor);
    if (!memo.fitsStrategy(req, pair)) return false;
    // Without consolidating reclaim even re-placed victims count as taken: the losses are unbounded here.
    if (!evicted || !this.ssn.params.allowConsolidatingReclaim) return true;
    const mine = add(reclaimerSide.allocated(), req);
    const gang = !victim.isElastic;
    // What the victim must lose at least: all its evicted pods (a gang is re-placed all or
    // nothing), or its smallest one (elastic).
    let lostCpu = 0;
    let lostMemory = 0;
    let lostGpu = 0;
    let lostAny = false;
    // Asked for every victim job of every node attempt (`evicted` holds distinct pods, job by
    // job): the queue test once per run of one job's pods, quantities only for pods that count.
    let lastJob: string | null = null;
    let lastUnder = false;
    for (const t of evicted) {
      if (t.jobUid !== lastJob) {
        lastJob = t.jobUid;
        lastUnder = memo.under(this.ssn.jobOf(t).queue, reclaimerSide.name);
      }
      const ofVictim = t.jobUid === victim.uid;
      if (!ofVictim && !lastUnder) continue;
      const cpu = t.hasAccepted ? t.acceptedCpu : 0;
      const memory = t.hasAccepted ? t.acceptedMemory : 0;
      const gpu = t.hasAccepted ? t.acceptedGpus : 0;
      if (ofVictim) {
        if (!lostAny || gang) {
          lostCpu += cpu;
          lostMemory += memory;
          lostGpu += gpu;
        } else {
          lostCpu = Math.min(lostCpu, cpu);
          lostMemory = Math.min(lostMemory, memory);
          lostGpu = Math.min(lostGpu, gpu);
        }
        lostAny = true;
      }
      if (lastUnder) {
        mine.cpu -= cpu;
        mine.memory -= memory;
        mine.gpu -= gpu;
      }
    }
    const theirs = victimSide.allocated();
    theirs.cpu -= lostCpu;
    theirs.memory -= lostMemory;
    theirs.gpu -= lostGpu;
    return this.saturationLower(memo.involved(req), mine, pair.reclaimerFair, theirs, pair.victimFair);
  }

  /** What mayTakeFrom derives from queues alone, kept while they are the same (one attempt's copy). */
  private memo: QueueMemo | null = null;

  private memoFor(queues: Map<string, QueueShare>): QueueMemo {
    // The live shares change with every placement: nothing is kept for them.
    if (queues !== this.prop.simulationQueues) return new QueueMemo(queues);
    if (this.memo?.queues !== queues) this.memo = new QueueMemo(queues);
    return this.memo;
  }

  /** Elastic extra tasks one by one, the gang-minimum tasks as one chunk; re-placed tasks are not taken. */
  private victimChunks(v: Victim): Quantities[] {
    const ignoreMoved = this.ssn.params.allowConsolidatingReclaim;
    // A victim never evicted has nothing to count: skip the grouping.
    if (ignoreMoved && v.tasks.every((t) => isActiveAllocated(t.status))) return [];
    const bySet = new Map<string, PodInfo[]>();
    for (const t of v.tasks) {
      const l = bySet.get(t.subGroup) ?? [];
      l.push(t);
      bySet.set(t.subGroup, l);
    }
    const core: PodInfo[] = [];
    const elastic: PodInfo[] = [];
    for (const [name, tasks] of bySet) {
      const min = v.job.podSet(name)?.minAvailable ?? tasks.length;
      if (min >= tasks.length) core.push(...tasks);
      else {
        core.push(...tasks.slice(0, min));
        elastic.push(...tasks.slice(min));
      }
    }
    const sum = (ts: PodInfo[]): Quantities | null => {
      const kept = ignoreMoved ? ts.filter((t) => !isActiveAllocated(t.status)) : ts;
      if (kept.length === 0) return null;
      return kept.reduce((a, t) => add(a, acceptedQuantities(t)), zero());
    };
    const out: Quantities[] = [];
    for (const t of elastic) {
      const q = sum([t]);
      if (q) out.push(q);
    }
    const c = sum(core);
    if (c) out.push(c);
    return out;
  }

  private withinBoundaries(
    queues: Map<string, QueueShare>,
    preemptor: JobInfo,
    req: Quantities,
    remaining: Map<string, Quantities>,
    involvedBy: Map<string, Set<ResourceName>>,
  ): boolean {
    const reqInvolved = involved([req]);
    for (let q = queues.get(preemptor.queue); q; q = q.parent ? queues.get(q.parent) : undefined) {
      let mine = remaining.get(q.name);
      if (!mine) mine = q.allocated();
      else remaining.set(q.name, mine);
      for (const k of RESOURCES) mine[k] += req[k];
      for (const [sibName, sibRemaining] of remaining) {
        const sib = queues.get(sibName)!;
        if (sib.parent !== q.parent || sib.name === q.name) continue;
        const res = new Set([...(involvedBy.get(sibName) ?? []), ...reqInvolved]);
        if (!this.saturationLower(res, mine, q.fairShare(), sibRemaining, sib.fairShare())) return false;
      }
      if (preemptor.preemptible) continue;
      if (!lessEqual(add(q.allocatedNotPreemptible(), req), q.deserved())) return false;
    }
    return true;
  }

  private saturationLower(
    res: Set<ResourceName>,
    mine: Quantities,
    myFair: Quantities,
    sib: Quantities,
    sibFair: Quantities,
  ): boolean {
    for (const r of res) {
      if (myFair[r] === UNLIMITED && sibFair[r] === UNLIMITED) continue;
      const mr = ratio(mine[r], myFair[r]);
      const sr = ratio(sib[r], sibFair[r]);
      if (mr > 1 && sibFair[r] > 0 && mr * this.saturationMultiplier >= sr) return false;
    }
    return true;
  }
}

function ratio(allocated: number, fair: number): number {
  if (fair === 0) return allocated > 0 ? Number.POSITIVE_INFINITY : 0;
  if (fair === UNLIMITED) return 0;
  return allocated / fair;
}

/** `queue` is `ancestor` or lies below it. */
function under(queues: Map<string, QueueShare>, queue: string, ancestor: string): boolean {
  for (let q = queues.get(queue); q; q = q.parent ? queues.get(q.parent) : undefined)
    if (q.name === ancestor) return true;
  return false;
}

function path(queues: Map<string, QueueShare>, name: string): QueueShare[] {
  const out: QueueShare[] = [];
  for (let q = queues.get(name); q; q = q.parent ? queues.get(q.parent) : undefined) out.unshift(q);
  return out;
}

/** The two queues where the paths from the root to `a` and to `b` diverge (siblings). */
function leveled(
  queues: Map<string, QueueShare>,
  a: string,
  b: string,
): [QueueShare | undefined, QueueShare | undefined] {
  const pa = path(queues, a);
  const pb = path(queues, b);
  let x: QueueShare | undefined;
  let y: QueueShare | undefined;
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    x = pa[i];
    y = pb[i];
    if (x !== y) break;
  }
  return [x, y];
}

/** Over its fair share (maintain fair share), or over deserved while the reclaimer stays within its own. */
function fitsStrategy(
  req: Quantities,
  reclaimer: QueueShare,
  victim: QueueShare,
  victimRemaining: Quantities,
): boolean {
  if (!lessEqual(victimRemaining, victim.allocatable())) return true;
  if (!lessEqual(add(reclaimer.allocated(), req), reclaimer.deserved())) return false;
  return !lessEqual(victimRemaining, victim.deserved());
}

interface SiblingPair {
  reclaimerSide: QueueShare;
  victimSide: QueueShare;
  reclaimerFair: Quantities;
  victimFair: Quantities;
  /** fitsStrategy per preemptor request (the request object is cached with the job's tasks). */
  fits: WeakMap<Quantities, boolean>;
}

/**
 * Facts about fixed queue shares (the proportion plugin's copy for one attempt is not
 * changed by the attempt's simulations): the sibling pair of two queues, ancestry, and
 * the strategy test per request.
 */
class QueueMemo {
  /** By reclaimer queue, then victim queue (nested maps: no key strings on this hot path). */
  private readonly pairs = new Map<string, Map<string, SiblingPair | null>>();
  /** By queue, then ancestor. */
  private readonly ancestry = new Map<string, Map<string, boolean>>();
  private readonly involvedBy = new WeakMap<Quantities, Set<ResourceName>>();

  constructor(readonly queues: Map<string, QueueShare>) {}

  pair(reclaimer: string, victim: string): SiblingPair | null {
    const byVictim = inner(this.pairs, reclaimer);
    let p = byVictim.get(victim);
    if (p === undefined) {
      const [reclaimerSide, victimSide] = leveled(this.queues, reclaimer, victim);
      p =
        reclaimerSide && victimSide
          ? {
              reclaimerSide,
              victimSide,
              reclaimerFair: reclaimerSide.fairShare(),
              victimFair: victimSide.fairShare(),
              fits: new WeakMap(),
            }
          : null;
      byVictim.set(victim, p);
    }
    return p;
  }

  fitsStrategy(req: Quantities, pair: SiblingPair): boolean {
    let f = pair.fits.get(req);
    if (f === undefined) {
      f = fitsStrategy(req, pair.reclaimerSide, pair.victimSide, pair.victimSide.allocated());
      pair.fits.set(req, f);
    }
    return f;
  }

  under(queue: string, ancestor: string): boolean {
    const byAncestor = inner(this.ancestry, queue);
    let u = byAncestor.get(ancestor);
    if (u === undefined) {
      u = under(this.queues, queue, ancestor);
      byAncestor.set(ancestor, u);
    }
    return u;
  }

  involved(req: Quantities): Set<ResourceName> {
    let s = this.involvedBy.get(req);
    if (!s) {
      s = involved([req]);
      this.involvedBy.set(req, s);
    }
    return s;
  }
}

/** The map under `key` in a map of maps, made on first use. */
function inner<V>(outer: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let m = outer.get(key);
  if (!m) {
    m = new Map();
    outer.set(key, m);
  }
  return m;
}
