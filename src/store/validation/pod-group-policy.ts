// Pods users create in a cluster answer to the same policy as submitted jobs: a namespace may
// charge only the queues mapped to it (the queues' namespaces), and a group's priority is capped
// by its queue's priority, so creating pods directly is no way around a queue's limits.
import type { QueuePolicy } from "../domain/queue-policy.js";
import { NON_PREEMPTIBLE_PRIORITY } from "./submit-job.js";
import type { PodGroupSpec } from "./pod-group-report.js";

/** Why the group may not charge its queue, or null. Groups gone from the cluster are never refused. */
export function podGroupRefusal(g: PodGroupSpec, policy: QueuePolicy): string | null {
  if (!g.pods.length || policy.namespaces.includes(g.namespace)) return null;
  return `pod group ${g.namespace}/${g.name} refused: namespace "${g.namespace}" may not charge queue ${g.queue} (its namespaces: ${policy.namespaces.join(", ")})`;
}

export function cappedPriority(g: PodGroupSpec, cap: number): PodGroupSpec {
  if (g.priority <= cap) return g;
  return { ...g, priority: cap, preemptible: cap < NON_PREEMPTIBLE_PRIORITY };
}
