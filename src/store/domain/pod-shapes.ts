// Pods of a reported pod group may differ from one another; the job model groups identical
// pods into tasks. A task per distinct shape, named after the shape's fingerprint, so that the
// same shape always lands in the same task however the group's membership changes.
import { createHash } from "node:crypto";
import type { PodShape } from "../validation/pod-group-report.js";

function shapeKey(s: PodShape): string {
  return JSON.stringify([
    s.cpuMillis,
    s.memory.toString(),
    s.gpus,
    s.gpuFraction,
    s.gpuMemory,
    s.gpuModel,
    s.nodeSelector.map((m) => [m.key, m.values]),
  ]);
}

/** "pods-" + 10 hex digits of the shape's sha256 (a valid task name, stable across reports). */
export function taskNameOf(s: PodShape): string {
  return `pods-${createHash("sha256").update(shapeKey(s)).digest("hex").slice(0, 10)}`;
}

/** The task rows (without job id) for these pods: one per shape, replicas = its pod count. */
export function tasksOf(
  pods: readonly { shape: PodShape }[],
): Map<string, { shape: PodShape; replicas: number }> {
  const tasks = new Map<string, { shape: PodShape; replicas: number }>();
  for (const p of pods) {
    const name = taskNameOf(p.shape);
    const task = tasks.get(name) ?? { shape: p.shape, replicas: 0 };
    task.replicas++;
    tasks.set(name, task);
  }
  return tasks;
}
