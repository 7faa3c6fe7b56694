// Cluster registration and lifecycle (admin).
import { z } from "zod";
import { UNFINISHED_JOB_STATES } from "../domain/job-state.js";
import { ConflictError, NotFoundError } from "../errors.js";
import { type Actor, type Store, transact } from "../store.js";
import type { Cluster } from "../types.js";
import { clusterName, labelInputs, labelsToRecord } from "../validation/names.js";
import { parseInput } from "../validation/parse.js";
import { clusterPodPolicyInput, storedClusterPodPolicy } from "../validation/pod-policy.js";
import { closeClusterUsage } from "./chargeback.js";
import { bumpGeneration, lockCluster } from "./cluster-fence.js";

const registerInput = z
  .object({ name: clusterName, labels: labelInputs.nullish(), podPolicy: clusterPodPolicyInput.nullish() })
  .strict();
export type RegisterClusterInput = z.input<typeof registerInput>;

/** Registers a cluster, or replaces the labels (and the pod policy, when given) of one already
 * registered (idempotent). */
export async function registerCluster(
  store: Store,
  actor: Actor,
  input: RegisterClusterInput,
): Promise<Cluster> {
  const c = parseInput(registerInput, input);
  const labels = labelsToRecord(c.labels ?? []);
  const podPolicy = c.podPolicy ? { podPolicy: storedClusterPodPolicy(c.podPolicy) } : {};
  return transact(store, actor, async (tx, record) => {
    const existing = await tx.cluster.findUnique({ where: { name: c.name }, select: { name: true } });
    const row = await tx.cluster.upsert({
      where: { name: c.name },
      create: { name: c.name, labels, ...podPolicy },
      update: { labels, ...podPolicy },
    });
    const policyNote = c.podPolicy ? `; pod policy ${JSON.stringify(podPolicy.podPolicy)}` : "";
    record({
      kind: existing ? "cluster.updated" : "cluster.registered",
      cluster: c.name,
      message: `cluster ${c.name} ${existing ? "labels updated" : "registered"}${policyNote}`,
    });
    return row;
  });
}

export async function cordonCluster(
  store: Store,
  actor: Actor,
  input: { name: string; cordoned: boolean },
): Promise<Cluster> {
  const c = parseInput(z.object({ name: clusterName, cordoned: z.boolean() }).strict(), input);
  return transact(store, actor, async (tx, record) => {
    if (!(await lockCluster(tx, c.name))) throw new NotFoundError("cluster", c.name, "name");
    const current = await tx.cluster.findUniqueOrThrow({ where: { name: c.name } });
    if (current.cordoned === c.cordoned) return current;
    await bumpGeneration(tx, c.name); // a session planned before the cordon must not place pods
    const row = await tx.cluster.update({ where: { name: c.name }, data: { cordoned: c.cordoned } });
    record({
      kind: c.cordoned ? "cluster.cordoned" : "cluster.uncordoned",
      cluster: c.name,
      message: `cluster ${c.name} ${c.cordoned ? "cordoned: no new pods are placed there" : "uncordoned"}`,
    });
    return row;
  });
}

/** Refused while jobs are unfinished on it. Its nodes, quota overrides and usage history go with
 * it (its chargeback samples rolled up first: the rollups stay);
 * finished jobs keep their history (their cluster becomes null); its agent tokens are revoked. */
export async function deleteCluster(store: Store, actor: Actor, input: { name: string }): Promise<true> {
  const { name } = parseInput(z.object({ name: clusterName }).strict(), input);
  return transact(store, actor, async (tx, record) => {
    if (!(await lockCluster(tx, name))) throw new NotFoundError("cluster", name, "name");
    const active = await tx.job.count({ where: { clusterName: name, state: { in: UNFINISHED_JOB_STATES } } });
    if (active) throw new ConflictError(`cluster "${name}" has ${active} unfinished job(s)`, "name");
    await tx.queueQuota.deleteMany({ where: { scope: name } });
    await closeClusterUsage(tx, name);
    await tx.apiToken.updateMany({
      where: { clusterName: name, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    await tx.cluster.delete({ where: { name } });
    record({ kind: "cluster.deleted", cluster: name, message: `cluster ${name} deleted` });
    return true as const;
  });
}
