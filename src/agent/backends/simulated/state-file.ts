// A simulated cluster's pods kept in a file, so the cluster outlives its agent process the way
// a real cluster does (an agent killed and restarted finds its pods still running), and so an
// outside observer can read what the cluster really runs. Every pod started is also appended to
// a log beside it (`<file>.binds`, one JSON line each): a pod started twice shows up there.
// The binds the cluster carried out are kept too (`<file>.ran`, one request id a line), as a real
// cluster keeps a finished pod's object: a request repeated after its pod ended finds it.
import { appendFileSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import type { BindRequestMessage } from "../../../protocol/bind-request.js";

export interface StoredPod {
  request: BindRequestMessage;
  /** ms since the epoch: the pod's run time counts from here. */
  startedAt: number;
}

export interface StoredCluster {
  pods: StoredPod[];
}

export function bindLogOf(stateFile: string): string {
  return `${stateFile}.binds`;
}

export function readClusterState(stateFile: string): StoredCluster {
  if (!existsSync(stateFile)) return { pods: [] };
  return JSON.parse(readFileSync(stateFile, "utf8")) as StoredCluster;
}

/** Written whole and renamed into place: a reader (or a restart after a kill) never sees half. */
export function writeClusterState(stateFile: string, pods: Iterable<StoredPod>): void {
  const tmp = `${stateFile}.tmp`;
  writeFileSync(tmp, JSON.stringify({ pods: [...pods] } satisfies StoredCluster));
  renameSync(tmp, stateFile);
}

export function appendBind(stateFile: string, pod: StoredPod): void {
  const { request } = pod;
  appendFileSync(
    bindLogOf(stateFile),
    `${JSON.stringify({ job: request.job.id, pod: request.pod.name, node: request.node, at: pod.startedAt })}\n`,
  );
}

function ranLogOf(stateFile: string): string {
  return `${stateFile}.ran`;
}

/** The ids of the bind requests the cluster carried out; none when its state is gone (a cluster
 * restarted empty keeps no finished pods either). */
export function readCarriedOut(stateFile: string): Set<string> {
  const log = ranLogOf(stateFile);
  if (!existsSync(stateFile)) {
    rmSync(log, { force: true });
    return new Set();
  }
  if (!existsSync(log)) return new Set();
  return new Set(readFileSync(log, "utf8").split("\n").filter(Boolean));
}

export function appendCarriedOut(stateFile: string, requestId: string): void {
  appendFileSync(ranLogOf(stateFile), `${requestId}\n`);
}
