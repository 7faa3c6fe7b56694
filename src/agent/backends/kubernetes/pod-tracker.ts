// Follows the pods of our scheduler name and tells the agent two things: state changes of
// pods that belong to a known job (reported once per change), and the membership of pod
// groups users created directly in the cluster (reported when it changes), which the
// control plane turns into jobs. The pods a workload's controller makes (a Job, JobSet, …) are
// known by their place in the workload (src/workload: "worker-1"): the tracker keeps which pod
// stands in each place now, so that a bind finds it, and says when the controller made a pod of
// a place again after the one before ended.
import type { V1Pod } from "@kubernetes/client-node";
import type { ExternalPod, ExternalPodGroup, PodRef, PodState, PodStateChange } from "../types.js";
import {
  createdByFleetq,
  externalPod,
  isTerminal,
  observedState,
  podGroupName,
  podGroupSettings,
  podControlName,
  podJobId,
} from "./pod-state.js";
import { BIND_REQUEST_KEY, POD_NAME_KEY, WORKLOAD_KIND_KEY } from "../../../protocol/labels.js";
import { workloadSlot } from "../../../workload/index.js";
import type { WatchEventType } from "./list-watch.js";
import type { Logger } from "pino";
import { RecentSet } from "../../recent-set.js";

/** Workload places remembered at most (those of gone pods are dropped beyond it). */
const MAX_PLACES = 50_000;

interface TrackedPod {
  jobId: string;
  name: string;
  node: string | null;
  state?: PodState;
  /** The BIND request that bound the pod (its annotation): a report that the pod is gone names it. */
  bindRequest?: string;
  /** Being deleted: a workload's controller may already have made its replacement. */
  leaving?: boolean;
}

interface GroupMember {
  pod: ExternalPod;
  settings: ReturnType<typeof podGroupSettings>;
}

export interface PodTrackerSink {
  podStates(changes: PodStateChange[]): void;
  externalPodGroups(groups: ExternalPodGroup[]): void;
  /** A pod fleetq created is seen finished (on every event or list that shows it). */
  finished?(pod: V1Pod): void;
}

/** Which pods of fleetq jobs are the agent's own: a pod that merely carries a job's annotations
 * (anyone who can create pods can write them) is ignored, said once in the log and counted. */
export interface PodOwnership {
  owns(pod: V1Pod): boolean;
  /** A pod left the cluster. */
  gone?(pod: V1Pod): void;
  log?: Logger;
}

export class PodTracker {
  /** Look-alike pods ignored so far (each once). */
  ignored = 0;
  private readonly ignoredUids = new RecentSet(10_000);
  /** Pods not (yet) known as the agent's: a workload's pod may come before the agent has its
   * object's uid (made by its controller while the create's answer was on its way). */
  private readonly held = new Map<string, V1Pod>();
  private readonly tracked = new Map<string, TrackedPod>();
  /** namespace/group → pod name → member. */
  private readonly groups = new Map<string, Map<string, GroupMember>>();
  private readonly changedGroups = new Set<string>();
  private flushTimer: NodeJS.Timeout | null = null;
  /** "jobId/place" → the key of the newest pod the workload's controller made for it. */
  private readonly places = new Map<string, string>();
  /** Binds waiting for a workload's controller to make the pod of a place. */
  private readonly placeWaiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly sink: PodTrackerSink,
    /** Gathers a burst of pod creations into one group report. */
    private readonly groupDebounceMs: number,
    private readonly ownership: PodOwnership = { owns: () => true },
  ) {}

  onList(pods: V1Pod[]): void {
    const changes: PodStateChange[] = [];
    const present = new Set<string>();
    const previousGroups = new Map([...this.groups].map(([key, members]) => [key, new Set(members.keys())]));
    this.groups.clear();
    this.held.clear();
    for (const pod of pods) {
      present.add(podKey(pod));
      this.observe(pod, changes, false);
    }
    for (const key of [...this.tracked.keys()]) if (!present.has(key)) this.gone(key, changes);
    // Report every group whose membership differs from before the (re)list.
    for (const key of new Set([...previousGroups.keys(), ...this.groups.keys()])) {
      const before = previousGroups.get(key);
      const after = this.groups.get(key);
      if (
        !before ||
        !after ||
        before.size !== after.size ||
        [...after.keys()].some((name) => !before.has(name))
      ) {
        this.changedGroups.add(key);
      }
    }
    this.publish(changes);
  }

  onEvent(type: WatchEventType, pod: V1Pod): void {
    const changes: PodStateChange[] = [];
    if (type === "DELETED") {
      this.held.delete(podKey(pod));
      this.ownership.gone?.(pod);
      this.gone(podKey(pod), changes);
      this.leaveGroup(pod);
    } else {
      this.observe(pod, changes, true);
    }
    this.publish(changes);
  }

  /** The pods of jobs the cluster has (as last listed and watched). */
  present(): PodRef[] {
    return [...this.tracked.values()].map((pod) => ({ jobId: pod.jobId, pod: pod.name }));
  }

  stop(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
  }

  private observe(pod: V1Pod, changes: PodStateChange[], markGroup: boolean): void {
    const key = podKey(pod);
    // Pods fleetq created carry the job id as a label; users' pods never do (a Binding
    // only copies annotations), so they stay members of their group once bound.
    const group = createdByFleetq(pod) ? null : podGroupName(pod);
    if (group) this.joinGroup(pod, group, markGroup);

    const jobId = podJobId(pod);
    if (!jobId) return;
    if (!this.ownership.owns(pod)) {
      this.ignore(pod, jobId);
      return;
    }
    this.held.delete(key);
    const known = this.tracked.get(key);
    const tracked = known ?? { jobId, name: this.nameOf(pod, jobId), node: null };
    if (!known && workloadKind(pod)) this.takePlace(key, tracked, changes);
    tracked.node = pod.spec?.nodeName ?? tracked.node;
    tracked.leaving = Boolean(pod.metadata?.deletionTimestamp);
    const bound = pod.metadata?.annotations?.[BIND_REQUEST_KEY];
    if (bound) tracked.bindRequest = newer(tracked.bindRequest, bound);
    this.tracked.set(key, tracked);
    const observed = observedState(pod);
    // A workload's pods are its controller's to delete.
    if (observed && isTerminal(observed.state) && createdByFleetq(pod) && !workloadKind(pod))
      this.sink.finished?.(pod);
    if (observed && observed.state !== tracked.state) {
      tracked.state = observed.state;
      // The run it is about: a pod of an earlier attempt (named apart) reports about that run.
      changes.push({
        jobId,
        pod: tracked.name,
        state: observed.state,
        ...(observed.message ? { message: observed.message } : {}),
        ...(observed.exitCode !== undefined ? { exitCode: observed.exitCode } : {}),
        ...(tracked.bindRequest ? { bindRequest: tracked.bindRequest } : {}),
      });
    }
  }

  /** Looks again at the pods held back, once more of the agent's objects are known. */
  reconsider(): void {
    const changes: PodStateChange[] = [];
    for (const [key, pod] of [...this.held])
      if (this.ownership.owns(pod)) {
        this.held.delete(key);
        this.observe(pod, changes, true);
      }
    this.publish(changes);
  }

  private ignore(pod: V1Pod, jobId: string): void {
    this.held.set(podKey(pod), pod);
    if (this.held.size > 10_000) this.held.delete(this.held.keys().next().value!);
    // A workload's pod is only held: its object's uid may be on its way.
    if (workloadKind(pod)) return;
    const uid = pod.metadata?.uid ?? podKey(pod);
    if (this.ignoredUids.has(uid)) return;
    this.ignoredUids.add(uid);
    this.ignored++;
    this.ownership.log?.warn(
      { pod: podKey(pod), uid, job: jobId, ignored: this.ignored },
      "ignoring a pod that names a fleetq job but was not created or bound by this agent",
    );
  }

  /** The name of the pod that stands in a place of a workload now; null when there is none. */
  placePod(jobId: string, place: string): string | null {
    const key = this.places.get(`${jobId}/${place}`);
    return key && this.tracked.has(key) ? key.slice(key.indexOf("/") + 1) : null;
  }

  /** The pod of a place of a workload, once its controller has made it (null after `ms`). */
  async waitForPlace(jobId: string, place: string, ms: number): Promise<string | null> {
    const now = this.placePod(jobId, place);
    if (now) return now;
    const slot = `${jobId}/${place}`;
    await new Promise<void>((resolve) => {
      const waiters = this.placeWaiters.get(slot) ?? new Set();
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
      this.placeWaiters.set(slot, waiters);
    });
    return this.placePod(jobId, place);
  }

  /** The control plane's name of a pod: its annotation once bound; a workload's pod, its place
   * (a non-indexed Job's pod the first place of its task no live pod stands in: one being
   * deleted has given its place up to its replacement). */
  private nameOf(pod: V1Pod, jobId: string): string {
    const kind = workloadKind(pod);
    if (!kind || pod.metadata?.annotations?.[POD_NAME_KEY]) return podControlName(pod);
    const slot = workloadSlot(kind, pod.metadata?.labels ?? {}, pod.metadata?.annotations ?? {});
    if (!slot) return podControlName(pod);
    if (slot.index !== null) return `${slot.task}-${slot.index}`;
    for (let i = 0; ; i++) {
      const key = this.places.get(`${jobId}/${slot.task}-${i}`);
      const holder = key ? this.tracked.get(key) : undefined;
      if (!holder || holder.leaving || isTerminal(holder.state)) return `${slot.task}-${i}`;
    }
  }

  /** A workload's pod takes its place; one whose place had a pod before that has ended (or is
   * gone: a controller may make the new pod under the same name) is the controller's new run. */
  private takePlace(key: string, pod: TrackedPod, changes: PodStateChange[]): void {
    const slot = `${pod.jobId}/${pod.name}`;
    const before = this.places.get(slot);
    this.places.set(slot, key);
    // Places whose pods are gone are kept (a pod made again is told apart by them), within a bound.
    if (this.places.size > MAX_PLACES)
      for (const [place, holder] of this.places)
        if (place !== slot && !this.tracked.has(holder)) this.places.delete(place);
    if (before !== undefined) {
      const previous = this.tracked.get(before);
      if (!previous || isTerminal(previous.state))
        changes.push({
          jobId: pod.jobId,
          pod: pod.name,
          state: "PENDING",
          message: "made again by its controller",
          recreated: true,
        });
    }
    for (const wake of [...(this.placeWaiters.get(slot) ?? [])]) wake();
  }

  /** A bind carried out by the pod already on its node: the pod's run is now that bind's (a
   * repeat of an older bind changes nothing). */
  adopt(pod: V1Pod, bindRequest: string): void {
    const tracked = this.tracked.get(podKey(pod));
    if (tracked) tracked.bindRequest = newer(tracked.bindRequest, bindRequest);
  }

  /** A pod of a job left the cluster before finishing: it is Pending again, without a node. */
  private gone(key: string, changes: PodStateChange[]): void {
    const tracked = this.tracked.get(key);
    if (!tracked) return;
    this.tracked.delete(key);
    if (isTerminal(tracked.state)) return;
    const where = tracked.node ? ` from ${tracked.node}` : "";
    changes.push({
      jobId: tracked.jobId,
      pod: tracked.name,
      state: "PENDING",
      message: `the pod was deleted${where}`,
      ...(tracked.bindRequest ? { bindRequest: tracked.bindRequest } : {}),
    });
  }

  private joinGroup(pod: V1Pod, group: string, markGroup: boolean): void {
    const key = `${pod.metadata?.namespace ?? ""}/${group}`;
    let members = this.groups.get(key);
    if (!members) {
      members = new Map();
      this.groups.set(key, members);
    }
    const name = pod.metadata?.name ?? "";
    if (markGroup && !members.has(name)) this.changedGroups.add(key);
    members.set(name, { pod: externalPod(pod), settings: podGroupSettings(pod) });
  }

  private leaveGroup(pod: V1Pod): void {
    const group = podGroupName(pod);
    if (!group) return;
    const key = `${pod.metadata?.namespace ?? ""}/${group}`;
    if (this.groups.get(key)?.delete(pod.metadata?.name ?? "")) this.changedGroups.add(key);
  }

  private publish(changes: PodStateChange[]): void {
    if (changes.length > 0) this.sink.podStates(changes);
    if (this.changedGroups.size > 0 && !this.flushTimer) {
      this.flushTimer = setTimeout(() => this.flushGroups(), this.groupDebounceMs);
    }
  }

  private flushGroups(): void {
    this.flushTimer = null;
    const groups: ExternalPodGroup[] = [];
    for (const key of this.changedGroups) {
      const slash = key.indexOf("/");
      const members = [...(this.groups.get(key)?.values() ?? [])];
      if (members.length === 0) this.groups.delete(key);
      // An empty pod list says the group is gone from the cluster.
      const settings = members[0]?.settings ?? { queue: "default", minMember: null, priority: null };
      groups.push({
        namespace: key.slice(0, slash),
        name: key.slice(slash + 1),
        ...settings,
        pods: members.map((member) => member.pod),
      });
    }
    this.changedGroups.clear();
    if (groups.length > 0) this.sink.externalPodGroups(groups);
  }
}

/** The later of two BIND request ids (they are time-ordered). */
function newer(current: string | undefined, candidate: string): string {
  return current && current > candidate ? current : candidate;
}

function podKey(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? ""}/${pod.metadata?.name ?? ""}`;
}

/** The kind of the workload a pod's controller made it for (its template's mark); null for others. */
function workloadKind(pod: V1Pod): string | null {
  return pod.metadata?.annotations?.[WORKLOAD_KIND_KEY] ?? null;
}
