// The names a job's objects have in a Kubernetes namespace. The control plane names pods
// "<task>-<i>", unique only within their job; in a namespace shared by many jobs (and by re-runs
// of one spec) the pods fleetq creates are named "<job>-<short id>-<pod>", and each gang restart's
// pods "<job>-<short id>-<pod>-r<restarts>", so an attempt never meets the pods of the one
// before: valid DNS-1123 labels of at most 63 characters. Within its job a pod is reached by its
// hostname "<task>-<i>" under the job's headless Service "<job>-<short id>". Pods users created
// themselves keep their names.
import type { BindRequestMessage } from "../protocol/bind-request.js";

const MAX_NAME = 63;
/** Longest pod part kept readable; longer or changed ones end in a hash. */
const MAX_POD_PART = 40;

/** The Kubernetes name of the request's pod. */
export function clusterPodName(request: Pick<BindRequestMessage, "job" | "pod">): string {
  if (request.job.createdInCluster) return request.pod.name;
  return uniquePodName(request.job.id, request.job.name, request.pod.name, request.job.restarts);
}

/** The last hex digits of a UUID v7 are random (its first ones are the submit time). */
function shortId(jobId: string): string {
  return dnsLabel(jobId).replace(/-/g, "").slice(-8) || "0";
}

export function uniquePodName(jobId: string, jobName: string, pod: string, restarts = 0): string {
  const short = shortId(jobId);
  const attempt = restarts > 0 ? `-r${restarts}` : "";
  let podPart = dnsLabel(pod);
  if (podPart !== pod || podPart.length > MAX_POD_PART) {
    podPart = `${trimEnd(podPart.slice(0, MAX_POD_PART - 9))}-${hash(pod)}`.replace(/^-/, "");
  }
  podPart += attempt;
  const room = MAX_NAME - short.length - podPart.length - 2;
  const jobPart = trimEnd(dnsLabel(jobName).slice(0, Math.max(0, room)));
  return jobPart ? `${jobPart}-${short}-${podPart}` : `${short}-${podPart}`;
}

/** The job's headless Service: a DNS-1035 label (it starts with a letter) of at most 63. */
export function jobServiceName(jobId: string, jobName: string): string {
  const short = shortId(jobId);
  let jobPart = dnsLabel(jobName);
  if (!/^[a-z]/.test(jobPart)) jobPart = `j-${jobPart}`;
  return `${trimEnd(jobPart.slice(0, MAX_NAME - short.length - 1))}-${short}`;
}

/** A pod's hostname within its job: its control-plane name "<task>-<i>" (a DNS-1123 label). */
export function podHostname(pod: string): string {
  return dnsLabel(pod).slice(0, MAX_NAME).replace(/-+$/, "") || "pod";
}

/** Label values: at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends. */
export function labelValue(value: string): string {
  return value
    .replace(/[^A-Za-z0-9._-]/g, "-")
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
}

/** Lowercase letters, digits and '-', alphanumeric at both ends. */
function dnsLabel(value: string): string {
  return value
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

function trimEnd(value: string): string {
  return value.replace(/-+$/, "");
}

/** FNV-1a, 8 hex digits: keeps names that differ only in what dnsLabel drops apart. */
function hash(value: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) {
    h ^= value.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}
