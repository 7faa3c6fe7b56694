// Required inter-pod affinity and anti-affinity, with Kubernetes' rules: affinity needs
// a matching pod in the candidate node's topology domain (or, when no pod anywhere
// matches, the pod matching its own term); anti-affinity forbids a matching pod there,
// in both directions.
import type { NodeInfo } from "../../api/node-info.js";
import type { PodInfo } from "../../api/pod-info.js";
import type { PodAffinityTerm, PodGroupSpec } from "../../api/spec.js";
import type { Session } from "../../framework/session.js";

function matches(labels: Record<string, string>, term: PodAffinityTerm): boolean {
  for (const [k, v] of Object.entries(term.matchLabels)) if (labels[k] !== v) return false;
  return true;
}

function sameDomain(a: NodeInfo, b: NodeInfo, key: string): boolean {
  const v = a.labels[key];
  return v !== undefined && v === b.labels[key];
}

function* podsInDomain(ssn: Session, node: NodeInfo, key: string): Generator<PodInfo> {
  for (const n of ssn.nodes) {
    if (!sameDomain(n, node, key)) continue;
    for (const e of n.pods.values()) yield e.pod;
  }
}

/** Whether a pod of the job spec carries anti-affinity terms (a look at its few pods costs less
 * than a memo lookup would). */
function specHasAntiAffinity(spec: PodGroupSpec): boolean {
  return spec.pods.some((p) => !!p.podAntiAffinity?.length);
}

export class PodAffinity {
  /** Any placed pod carries anti-affinity terms (then every task must be checked against them). */
  private anyAntiAffinity: boolean;

  constructor(private readonly ssn: Session) {
    this.anyAntiAffinity = false;
    for (const j of ssn.jobs.values())
      if (specHasAntiAffinity(j.spec)) {
        this.anyAntiAffinity = true;
        break;
      }
  }

  error(task: PodInfo, node: NodeInfo): string | null {
    const ssn = this.ssn;
    for (const term of task.spec.podAffinity ?? []) {
      let found = false;
      for (const p of podsInDomain(ssn, node, term.topologyKey))
        if (p !== task && matches(p.spec.labels, term)) {
          found = true;
          break;
        }
      if (found) continue;
      if (!matches(task.spec.labels, term) || this.anyPlacedMatch(task, term))
        return "node(s) didn't match pod affinity rules";
    }
    for (const term of task.spec.podAntiAffinity ?? [])
      for (const p of podsInDomain(ssn, node, term.topologyKey))
        if (p !== task && matches(p.spec.labels, term)) return "node(s) didn't match pod anti-affinity rules";
    if (this.anyAntiAffinity)
      for (const n of ssn.nodes)
        for (const e of n.pods.values()) {
          const p = e.pod;
          if (p === task) continue;
          for (const term of p.spec.podAntiAffinity ?? [])
            if (sameDomain(n, node, term.topologyKey) && matches(task.spec.labels, term))
              return "node(s) didn't satisfy existing pods anti-affinity rules";
        }
    return null;
  }

  private anyPlacedMatch(task: PodInfo, term: PodAffinityTerm): boolean {
    for (const n of this.ssn.nodes)
      for (const e of n.pods.values()) if (e.pod !== task && matches(e.pod.spec.labels, term)) return true;
    return false;
  }
}
