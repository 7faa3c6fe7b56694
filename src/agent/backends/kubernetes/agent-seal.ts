// What makes a pod or workload object this agent's in a way no one who merely creates pods can
// forge: annotations are anyone's to write, so the agent seals what it creates or binds with an
// HMAC under its cluster's key (the API gives it, with the agent's token) — over the pod's uid
// (carried by the Binding: the API server copies its annotations onto the pod, at no extra call),
// or over a workload object's kind, namespace, name and job (set when the agent creates it). The
// pods it created in this run are also known by uid. After a restart, the seals say which are its.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { V1Pod } from "@kubernetes/client-node";

export const SEAL_KEY = "fleetq.io/agent-seal";

/** Until the agent has its cluster's key (a backend used alone: tests), one of this process. */
const PROCESS_KEY = randomBytes(32);

/** Pods' uids remembered at most (those of deleted pods are dropped when they go). */
const MAX_OWN = 200_000;

export class AgentSeals {
  private key: Buffer = PROCESS_KEY;
  private readonly own = new Set<string>();

  /** The cluster's key (hex, agentBindKey): seals then outlive the process. */
  useKey(hexKey: string): void {
    this.key = createHmac("sha256", Buffer.from(hexKey, "hex")).update("fleetq agent seal").digest();
  }

  /** A pod this agent created or bound in this run. */
  record(uid: string | undefined): void {
    if (!uid) return;
    this.own.add(uid);
    if (this.own.size > MAX_OWN) this.own.delete(this.own.values().next().value!);
  }

  forget(uid: string | undefined): void {
    if (uid) this.own.delete(uid);
  }

  podSeal(uid: string): string {
    return this.mac(`pod\0${uid}`);
  }

  workloadSeal(kind: string, namespace: string, name: string, jobId: string): string {
    return this.mac(`workload\0${kind}\0${namespace}\0${name}\0${jobId}`);
  }

  /** Created or bound by this agent (this run, or sealed by an earlier one). */
  ownsPod(pod: V1Pod): boolean {
    const uid = pod.metadata?.uid;
    if (!uid) return false;
    return this.own.has(uid) || this.matches(pod.metadata?.annotations?.[SEAL_KEY], this.podSeal(uid));
  }

  ownsWorkload(
    kind: string,
    object: { metadata?: { namespace?: string; name?: string; annotations?: Record<string, string> } },
    jobId: string,
  ): boolean {
    const m = object.metadata ?? {};
    const expected = this.workloadSeal(kind, m.namespace ?? "", m.name ?? "", jobId);
    return this.matches(m.annotations?.[SEAL_KEY], expected);
  }

  private mac(text: string): string {
    return createHmac("sha256", this.key).update(text).digest("hex");
  }

  private matches(found: string | undefined, expected: string): boolean {
    if (!found || found.length !== expected.length) return false;
    return timingSafeEqual(Buffer.from(found), Buffer.from(expected));
  }
}
