// minruntime: a job that started recently is protected from preemption / reclaim for a
// minimum runtime, set per queue and inherited down the tree (KAI: plugins/minruntime).
// Elastic victims are never filtered out; instead a scenario may not take a protected
// one below its gang minimum.
import type { JobInfo } from "../../api/podgroup-info.js";
import type { QueueInfo } from "../../api/queue-info.js";
import type { PluginArguments } from "../../framework/config.js";
import type { Scenario, Victim } from "../../framework/scenario.js";
import type { Plugin, Session } from "../../framework/session.js";
import { parseDurationSeconds } from "../../util/duration.js";

export const name = "minruntime";

function durationArg(args: PluginArguments, keys: string[]): number {
  for (const k of keys)
    if (args[k] !== undefined) {
      const s = parseDurationSeconds(args[k], `plugin minruntime: argument ${k}`);
      return s < 0 ? 0 : s;
    }
  return 0;
}

function path(ssn: Session, q: QueueInfo): QueueInfo[] {
  const out: QueueInfo[] = [];
  for (let c: QueueInfo | undefined = q; c; c = c.parent ? ssn.queues.get(c.parent) : undefined)
    out.unshift(c);
  return out;
}

/** The victim would keep at least its gang minimum in every pod set it loses pods from. */
function keepsMinimum(v: Victim): boolean {
  const taken = new Map<string, number>();
  for (const t of v.tasks) taken.set(t.subGroup, (taken.get(t.subGroup) ?? 0) + 1);
  for (const [set, n] of taken) {
    const ps = v.job.podSet(set);
    if (ps && ps.minAvailable > ps.activeUsed - n) return false;
  }
  return true;
}

/** The plugin's default minimum runtimes (seconds), for queues that set none. */
export function defaultMinRuntimes(args: PluginArguments = {}): { preempt: number; reclaim: number } {
  return {
    preempt: durationArg(args, ["defaultPreemptMinRuntime", "preemptMinRuntime"]),
    reclaim: durationArg(args, ["defaultReclaimMinRuntime", "reclaimMinRuntime"]),
  };
}

export function create(args: PluginArguments = {}): Plugin {
  const { preempt: defaultPreempt, reclaim: defaultReclaim } = defaultMinRuntimes(args);
  const method = (args.reclaimResolveMethod as string | undefined) ?? "lca";
  if (method !== "lca" && method !== "queue")
    throw new Error(
      `plugin minruntime: reclaimResolveMethod must be "lca" or "queue", got ${JSON.stringify(method)}`,
    );

  return {
    name,
    onSessionOpen(ssn) {
      const preemptOf = (q: QueueInfo): number => {
        for (let c: QueueInfo | undefined = q; c; c = c.parent ? ssn.queues.get(c.parent) : undefined)
          if (c.spec.preemptMinRuntimeSeconds != null) return c.spec.preemptMinRuntimeSeconds;
        return defaultPreempt;
      };
      // Asked for every candidate victim of every reclaim attempt; the tree does not change
      // during a session, so each pair of queues is resolved once.
      const reclaimByPair = new Map<QueueInfo, Map<QueueInfo, number>>();
      const reclaimOf = (preemptor: QueueInfo, victim: QueueInfo): number => {
        const byVictim = reclaimByPair.get(preemptor) ?? new Map<QueueInfo, number>();
        reclaimByPair.set(preemptor, byVictim);
        const known = byVictim.get(victim);
        if (known !== undefined) return known;
        const seconds = resolveReclaim(preemptor, victim);
        byVictim.set(victim, seconds);
        return seconds;
      };
      const resolveReclaim = (preemptor: QueueInfo, victim: QueueInfo): number => {
        const own = (c: QueueInfo) => c.spec.reclaimMinRuntimeSeconds;
        if (method === "queue") {
          for (let c: QueueInfo | undefined = victim; c; c = c.parent ? ssn.queues.get(c.parent) : undefined)
            if (own(c) != null) return own(c)!;
          return defaultReclaim;
        }
        const pp = path(ssn, preemptor);
        const vp = path(ssn, victim);
        if (pp[0] !== vp[0]) return own(vp[0]!) ?? defaultReclaim;
        let lca = 0;
        for (let i = 0; i < Math.min(pp.length, vp.length) && pp[i] === vp[i]; i++) lca = i;
        if (lca + 1 < vp.length) lca++;
        for (let i = lca; i >= 0; i--) if (own(vp[i]!) != null) return own(vp[i]!)!;
        return defaultReclaim;
      };
      const protectedFor = (victim: JobInfo, seconds: number): boolean =>
        victim.lastStartAt !== null && ssn.now < victim.lastStartAt + seconds * 1000;
      const reclaimProtected = (p: JobInfo, v: JobInfo): boolean => {
        const pq = ssn.queues.get(p.queue);
        const vq = ssn.queues.get(v.queue);
        return !!pq && !!vq && protectedFor(v, reclaimOf(pq, vq));
      };
      const preemptProtected = (v: JobInfo): boolean => {
        const vq = ssn.queues.get(v.queue);
        return !!vq && protectedFor(v, preemptOf(vq));
      };
      ssn.reclaimVictimFilterFns.push((p, v) => v.isElastic || !reclaimProtected(p, v));
      ssn.preemptVictimFilterFns.push((_p, v) => v.isElastic || !preemptProtected(v));
      const validator = (isProtected: (s: Scenario, v: JobInfo) => boolean) => (s: Scenario) =>
        s.victims.every((v) => !v.job.isElastic || !isProtected(s, v.job) || keepsMinimum(v));
      ssn.reclaimValidatorFns.push(validator((s, v) => reclaimProtected(s.preemptor, v)));
      ssn.preemptValidatorFns.push(validator((_s, v) => preemptProtected(v)));
    },
  };
}
