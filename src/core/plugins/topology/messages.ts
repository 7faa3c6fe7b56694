// Job fit errors and configuration errors, worded as KAI words them
// (plugins/topology/job_filtering.go, api/common_info/job_errors.go).
import { DEFAULT_SUB_GROUP } from "../../api/pod-info.js";
import type { JobInfo } from "../../api/podgroup-info.js";
import { isMigResource } from "../../api/resources.js";
import { type Amounts, scalarOf } from "./domain-tree.js";

/** Go's strconv.FormatFloat(x, 'g', 3, 64). */
export function formatG3(x: number): string {
  if (x === 0) return "0";
  if (!Number.isFinite(x)) return x > 0 ? "+Inf" : x < 0 ? "-Inf" : "NaN";
  const [mantissa, expPart] = x.toExponential(2).split("e") as [string, string];
  const exp = Number(expPart);
  if (exp < -4 || exp >= 3) {
    const m = mantissa.replace(/\.?0+$/, "");
    return `${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return trimZeros(x.toFixed(Math.max(0, 2 - exp)));
}

/** humanize.FtoaWithDigits(x, 3): at most 3 decimals, trailing zeros dropped. */
export function formatDigits3(x: number): string {
  return trimZeros(x.toFixed(3));
}

function trimZeros(s: string): string {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

const isNamedSubGroup = (name: string) => name.length > 0 && name !== DEFAULT_SUB_GROUP;

/** "topology T, requirement R couldn't be satisfied for job <ns/name>[, subgroup S][: suffix]". */
export function noTopologyMatch(
  job: JobInfo,
  subGroup: string,
  topology: string,
  required: string | null,
  suffix?: string,
): string {
  let target = `job <${job.namespace}/${job.name}>`;
  if (isNamedSubGroup(subGroup)) target += `, subgroup ${subGroup}`;
  return (
    `topology ${topology}, requirement ${required ?? ""} couldn't be satisfied for ${target}` +
    (suffix ? `: ${suffix}` : "")
  );
}

/** A constraint naming a level the topology does not have. */
export function levelNotInTopology(
  subGroup: string,
  topology: string,
  kind: "required" | "preferred",
  level: string,
): string {
  const who = subGroup === DEFAULT_SUB_GROUP ? "workload" : `sub-group ${subGroup}`;
  return (
    `topology constraint error: ${who} specified '${level}' as the ${kind} topology constraint level, ` +
    `but the topology tree '${topology}' does not contain a level with this name`
  );
}

export function noConstraintLevels(subGroup: string, topology: string): string {
  return `no topology constraints were found for subgroup ${subGroup}, with topology name ${topology}`;
}

/** A domain's fit error as KAI's TopologyFitError.DetailedMessage renders it. */
export function domainFitError(subGroup: string, domainId: string, details: readonly string[]): string {
  const prefix = isNamedSubGroup(subGroup) ? `subgroup ${subGroup}: ` : "";
  return `<${domainId}>: ${prefix}${details.join(", ")}`;
}

export function tooFewPods(domainId: string, allocatable: number, required: number): string {
  return `node-group ${domainId} can allocate only ${allocatable} of ${required} required pods`;
}

/**
 * What the domain lacks for the summed request (KAI: NewTopologyInsufficientResourcesError);
 * scalar resources in name order where KAI follows map order. Extended resources are
 * shown in milli-units, as KAI stores them.
 */
export function insufficientResources(domainId: string, demand: Amounts, free: Amounts): string[] {
  const out: string[] = [];
  const scalars = [...(demand.scalars ?? new Map<string, number>())].sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const migs = scalars.filter(([k]) => isMigResource(k));
  if (migs.length > 0) {
    for (const [k, v] of migs) {
      const avail = scalarOf(free, k);
      if (avail < v)
        out.push(`${domainId} didn't have enough resource: ${k}, requested: ${v}, available: ${avail}`);
    }
  } else if (demand.gpus > free.gpus) {
    out.push(
      `${domainId} didn't have enough resource: GPUs, requested: ${formatG3(demand.gpus)}, available: ${formatG3(free.gpus)}`,
    );
  }
  if (Math.trunc(demand.cpu) > Math.trunc(free.cpu))
    out.push(
      `${domainId} didn't have enough resources: CPU cores, requested: ${formatDigits3(demand.cpu / 1000)}, ` +
        `available: ${formatDigits3(free.cpu / 1000)}`,
    );
  if (demand.memory > free.memory)
    out.push(
      `${domainId} didn't have enough resources: memory, requested: ${formatDigits3(demand.memory / 1e9)}, ` +
        `available: ${formatDigits3(free.memory / 1e9)}`,
    );
  const all: [string, number, number][] = [["pods", demand.pods, free.pods]];
  for (const [k, v] of scalars)
    all.push([
      k,
      isMigResource(k) ? v : v * 1000,
      isMigResource(k) ? scalarOf(free, k) : scalarOf(free, k) * 1000,
    ]);
  all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [k, req, avail] of all)
    if (avail < req)
      out.push(`${domainId} didn't have enough resource: ${k}, requested: ${req}, available: ${avail}`);
  return out;
}
