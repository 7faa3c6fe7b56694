// The controllers of the workload kinds, played against the fake Kubernetes API server as the real
// ones name, label and own what they make: the Job controller (pods `<job>-<index>-<random>` or
// `<job>-<random>`, the completion index label, a backoff limit), the JobSet controller (a Job
// `<jobset>-<replicated job>-<index>` per replica, restarts by its failure policy), the training
// operator's PyTorchJob (`<name>-master-0`, `<name>-worker-<i>`, replica type and index labels)
// and the MPI operator's MPIJob (worker pods `<name>-worker-<i>` with role and index labels, a
// launcher Job `<name>-launcher`). Level-triggered: every few milliseconds each object is brought
// to what its spec and its pods say, as a controller's sync is.
import { randomBytes } from "node:crypto";
import type { FakeKubeApiServer, ServedResource } from "./fake-kube-apiserver.js";
import type { Json } from "./fake-kube-store.js";

export const WORKLOAD_RESOURCES = {
  job: { group: "batch", version: "v1", plural: "jobs", kind: "Job", defaultPropagation: "Orphan" },
  jobSet: { group: "jobset.x-k8s.io", version: "v1alpha2", plural: "jobsets", kind: "JobSet" },
  pyTorchJob: { group: "kubeflow.org", version: "v1", plural: "pytorchjobs", kind: "PyTorchJob" },
  mpiJob: { group: "kubeflow.org", version: "v2beta1", plural: "mpijobs", kind: "MPIJob" },
} as const satisfies Record<string, ServedResource>;

const JOBS = "batch/jobs";
const JOBSETS = "jobset.x-k8s.io/jobsets";
const PYTORCHJOBS = "kubeflow.org/pytorchjobs";
const MPIJOBS = "kubeflow.org/mpijobs";
const INDEX = "batch.kubernetes.io/job-completion-index";
const JOBSET = "jobset.sigs.k8s.io";
const KUBEFLOW = "training.kubeflow.org";

const suffix = () => {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  return [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join("");
};

const ownerRef = (object: Json, apiVersion: string, kind: string) => ({
  apiVersion,
  kind,
  name: object.metadata.name,
  uid: object.metadata.uid,
  controller: true,
  blockOwnerDeletion: true,
});

const condition = (type: string, reason: string, message = "") => ({
  type,
  status: "True",
  reason,
  message,
  lastTransitionTime: new Date().toISOString(),
});

const holds = (object: Json, ...types: string[]) =>
  ((object.status?.conditions ?? []) as Json[]).some((c) => types.includes(c.type) && c.status === "True");

const phase = (pod: Json) => pod.status?.phase as string | undefined;
const active = (pod: Json) => phase(pod) !== "Succeeded" && phase(pod) !== "Failed";

export class FakeControllers {
  private timer: NodeJS.Timeout | null = null;
  /** Pods each Job controller has seen (uid → it ended or went without succeeding, counted). */
  private readonly seen = new Map<string, { job: string; counted: boolean; succeeded: boolean }>();
  /** What each controller did, in order ("create pod ns/name", "restart jobset ns/name"). */
  readonly actions: string[] = [];

  constructor(private readonly kube: FakeKubeApiServer) {}

  /** Serves the kinds (their CRDs installed) and starts syncing them. */
  start(kinds: readonly ServedResource[] = Object.values(WORKLOAD_RESOURCES)): void {
    for (const kind of kinds) this.kube.serve(kind);
    this.timer = setInterval(() => this.sync(), 15);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  sync(): void {
    for (const js of this.kube.objectsOf(JOBSETS)) this.syncJobSet(js);
    for (const pj of this.kube.objectsOf(PYTORCHJOBS)) this.syncPyTorchJob(pj);
    for (const mj of this.kube.objectsOf(MPIJOBS)) this.syncMpiJob(mj);
    for (const job of this.kube.objectsOf(JOBS)) this.syncJob(job);
  }

  private podsOwnedBy(owner: Json): Json[] {
    return this.kube.store.list("pods", (p) =>
      ((p.metadata.ownerReferences ?? []) as Json[]).some((o) => o.uid === owner.metadata.uid),
    );
  }

  private createPod(
    namespace: string,
    name: string,
    template: Json,
    labels: Json,
    owner: Json,
    extra: Json = {},
  ) {
    this.kube.createPod({
      metadata: {
        name,
        namespace,
        labels: { ...template.metadata?.labels, ...labels },
        annotations: { ...template.metadata?.annotations, ...(extra.annotations ?? {}) },
        ownerReferences: [owner],
      },
      spec: { ...template.spec, ...(extra.spec ?? {}) },
    });
    this.actions.push(`create pod ${namespace}/${name}`);
  }

  private setStatus(resource: string, object: Json, status: Json): void {
    if (JSON.stringify(object.status ?? {}) === JSON.stringify(status)) return;
    this.kube.updateObject(resource, object.metadata.namespace, object.metadata.name, (o) => {
      o.status = status;
    });
  }

  // ---- batch/v1 Job ------------------------------------------------------------------

  private syncJob(job: Json): void {
    if (holds(job, "Complete", "Failed")) return;
    const { namespace, name, uid } = job.metadata;
    const spec = job.spec;
    const indexed = spec.completionMode === "Indexed";
    const parallelism = spec.parallelism ?? 1;
    const completions: number | null = spec.completions ?? null;
    const backoffLimit = spec.backoffLimit ?? 6;
    const pods = this.podsOwnedBy(job);
    // A pod that failed, or went without succeeding (deleted, evicted), counts once as a failure.
    const live = new Set(pods.map((p) => p.metadata.uid));
    for (const p of pods)
      if (!this.seen.has(p.metadata.uid))
        this.seen.set(p.metadata.uid, { job: uid, counted: false, succeeded: false });
    for (const [podUid, s] of this.seen) {
      if (s.job !== uid || s.counted) continue;
      const pod = pods.find((p) => p.metadata.uid === podUid);
      if (pod && phase(pod) === "Succeeded") s.succeeded = true;
      if ((pod && phase(pod) === "Failed") || (!live.has(podUid) && !s.succeeded)) s.counted = true;
    }
    const failed = [...this.seen.values()].filter((s) => s.job === uid && s.counted).length;
    const succeededPods = pods.filter((p) => phase(p) === "Succeeded");
    const running = pods.filter((p) => active(p) && !p.metadata.deletionTimestamp);
    const status: Json = {
      ...job.status,
      active: running.length,
      succeeded: succeededPods.length,
      failed,
      ...(job.status?.startTime ? {} : { startTime: new Date().toISOString() }),
    };
    if (failed > backoffLimit) {
      for (const p of running) this.kube.deletePod(namespace, p.metadata.name);
      status.active = 0;
      status.conditions = [
        condition("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
      ];
      this.setStatus(JOBS, job, status);
      return;
    }
    const labels = {
      "batch.kubernetes.io/controller-uid": uid,
      "batch.kubernetes.io/job-name": name,
      "controller-uid": uid,
      "job-name": name,
    };
    const owner = ownerRef(job, "batch/v1", "Job");
    if (indexed) {
      const done = new Set(succeededPods.map((p) => p.metadata.labels[INDEX]));
      const want = completions ?? parallelism;
      if (done.size >= want) {
        status.conditions = [
          condition("Complete", "CompletionsReached", "Reached expected number of succeeded pods"),
        ];
        status.completedIndexes = want > 1 ? `0-${want - 1}` : "0";
        this.setStatus(JOBS, job, status);
        return;
      }
      let count = running.length;
      for (let i = 0; i < want && count < parallelism; i++) {
        const index = String(i);
        if (done.has(index) || running.some((p) => p.metadata.labels[INDEX] === index)) continue;
        this.createPod(
          namespace,
          `${name}-${i}-${suffix()}`,
          spec.template,
          { ...labels, [INDEX]: index },
          owner,
          {
            annotations: { [INDEX]: index },
            spec: spec.template.spec.subdomain ? { hostname: `${name}-${i}` } : {},
          },
        );
        count++;
      }
    } else {
      const need =
        completions === null
          ? succeededPods.length > 0
            ? 0
            : parallelism
          : Math.min(parallelism, completions - succeededPods.length);
      if (need <= 0 && running.length === 0) {
        status.conditions = [
          condition("Complete", "CompletionsReached", "Reached expected number of succeeded pods"),
        ];
        this.setStatus(JOBS, job, status);
        return;
      }
      for (let n = running.length; n < need; n++)
        this.createPod(namespace, `${name}-${suffix()}`, spec.template, labels, owner);
    }
    this.setStatus(JOBS, job, status);
  }

  // ---- JobSet --------------------------------------------------------------------------

  private syncJobSet(js: Json): void {
    if (holds(js, "Completed", "Failed")) return;
    const { namespace, name } = js.metadata;
    const restarts: number = js.status?.restarts ?? 0;
    const children = this.kube
      .objectsOf(JOBS)
      .filter((j) => (j.metadata.ownerReferences ?? []).some((o: Json) => o.uid === js.metadata.uid));
    const failed = children.find((j) => holds(j, "Failed"));
    if (failed) {
      const maxRestarts = js.spec.failurePolicy?.maxRestarts ?? 0;
      if (restarts >= maxRestarts) {
        this.setStatus(JOBSETS, js, {
          ...js.status,
          conditions: [condition("Failed", "FailedJobs", `jobset failed due to job ${failed.metadata.name}`)],
        });
        return;
      }
      // A restart: every Job goes (with its pods), and is made again.
      for (const j of children) this.deleteChild(j);
      this.actions.push(`restart jobset ${namespace}/${name}`);
      this.setStatus(JOBSETS, js, { ...js.status, restarts: restarts + 1 });
      return;
    }
    const want: { rj: Json; index: number }[] = (js.spec.replicatedJobs as Json[]).flatMap((rj) =>
      Array.from({ length: rj.replicas ?? 1 }, (_, index) => ({ rj, index })),
    );
    if (children.length === want.length && children.every((j) => holds(j, "Complete"))) {
      this.setStatus(JOBSETS, js, {
        ...js.status,
        conditions: [condition("Completed", "AllJobsCompleted", "jobset completed successfully")],
      });
      return;
    }
    for (const { rj, index } of want) {
      const child = `${name}-${rj.name}-${index}`;
      if (children.some((j) => j.metadata.name === child)) continue;
      const marks = {
        [`${JOBSET}/jobset-name`]: name,
        [`${JOBSET}/replicatedjob-name`]: rj.name,
        [`${JOBSET}/replicatedjob-replicas`]: String(rj.replicas ?? 1),
        [`${JOBSET}/job-index`]: String(index),
        [`${JOBSET}/restart-attempt`]: String(restarts),
      };
      const spec = structuredClone(rj.template.spec);
      spec.completionMode ??= "Indexed";
      spec.template.metadata = {
        ...spec.template.metadata,
        labels: { ...spec.template.metadata?.labels, ...marks },
        annotations: { ...spec.template.metadata?.annotations, ...marks },
      };
      this.kube.createObject(JOBS, {
        metadata: {
          name: child,
          namespace,
          labels: { ...rj.template.metadata?.labels, ...marks },
          annotations: marks,
          ownerReferences: [ownerRef(js, "jobset.x-k8s.io/v1alpha2", "JobSet")],
        },
        spec,
      });
      this.actions.push(`create job ${namespace}/${child}`);
    }
  }

  /** A child Job deleted with background propagation: it goes, then the collector takes its pods. */
  private deleteChild(job: Json): void {
    for (const p of this.podsOwnedBy(job)) this.kube.deletePod(job.metadata.namespace, p.metadata.name);
    this.kube.store.remove(JOBS, `${job.metadata.namespace}/${job.metadata.name}`);
  }

  // ---- PyTorchJob ------------------------------------------------------------------------

  private syncPyTorchJob(pj: Json): void {
    if (holds(pj, "Succeeded", "Failed")) return;
    const { namespace, name } = pj.metadata;
    const specs = pj.spec.pytorchReplicaSpecs as Record<string, Json>;
    const pods = this.podsOwnedBy(pj);
    const owner = ownerRef(pj, "kubeflow.org/v1", "PyTorchJob");
    const byName = (n: string) => pods.find((p) => p.metadata.name === n);
    const status: Json = { ...pj.status, conditions: [condition("Created", "PyTorchJobCreated")] };
    let restarting = false;
    for (const [type, spec] of Object.entries(specs)) {
      const rtype = type.toLowerCase();
      for (let i = 0; i < (spec.replicas ?? 1); i++) {
        const podName = `${name}-${rtype}-${i}`;
        const pod = byName(podName);
        if (pod && phase(pod) === "Failed") {
          if ((spec.restartPolicy ?? "Never") === "Never") {
            status.conditions = [
              condition(
                "Failed",
                "PyTorchJobFailed",
                `PyTorchJob ${name} is failed because 1 ${type} replica(s) failed.`,
              ),
            ];
            this.setStatus(PYTORCHJOBS, pj, status);
            return;
          }
          this.kube.deletePod(namespace, podName);
          restarting = true;
          continue;
        }
        if (pod) continue;
        this.createPod(
          namespace,
          podName,
          spec.template,
          {
            [`${KUBEFLOW}/job-name`]: name,
            [`${KUBEFLOW}/operator-name`]: "pytorchjob-controller",
            [`${KUBEFLOW}/replica-type`]: rtype,
            [`${KUBEFLOW}/replica-index`]: String(i),
            ...(type === "Master" ? { [`${KUBEFLOW}/job-role`]: "master" } : {}),
          },
          owner,
        );
      }
    }
    const decisive = pods.filter((p) =>
      specs.Master ? p.metadata.labels[`${KUBEFLOW}/replica-type`] === "master" : true,
    );
    const total = specs.Master
      ? (specs.Master.replicas ?? 1)
      : Object.values(specs).reduce((n, s) => n + (s.replicas ?? 1), 0);
    if (decisive.length === total && decisive.every((p) => phase(p) === "Succeeded")) {
      status.conditions = [
        condition("Succeeded", "PyTorchJobSucceeded", `PyTorchJob ${name} is successfully completed.`),
      ];
      this.setStatus(PYTORCHJOBS, pj, status);
      return;
    }
    if (restarting)
      status.conditions = [
        condition("Restarting", "PyTorchJobRestarting", `PyTorchJob ${name} is restarting.`),
      ];
    else if (pj.status?.conditions?.some((c: Json) => c.type === "Restarting"))
      status.conditions = pj.status.conditions;
    this.setStatus(PYTORCHJOBS, pj, status);
  }

  // ---- MPIJob --------------------------------------------------------------------------------

  private syncMpiJob(mj: Json): void {
    if (holds(mj, "Succeeded", "Failed")) return;
    const { namespace, name } = mj.metadata;
    const specs = mj.spec.mpiReplicaSpecs as Record<string, Json>;
    const owner = ownerRef(mj, "kubeflow.org/v2beta1", "MPIJob");
    const role = (r: string) => ({
      [`${KUBEFLOW}/operator-name`]: "mpi-operator",
      [`${KUBEFLOW}/job-name`]: name,
      [`${KUBEFLOW}/job-role`]: r,
    });
    const offset = mj.spec.runLauncherAsWorker ? 1 : 0;
    const pods = this.podsOwnedBy(mj);
    const worker = specs.Worker;
    for (let i = 0; worker && i < (worker.replicas ?? 1); i++) {
      const podName = `${name}-worker-${i}`;
      if (pods.some((p) => p.metadata.name === podName)) continue;
      this.createPod(
        namespace,
        podName,
        worker.template,
        { ...role("worker"), [`${KUBEFLOW}/replica-index`]: String(i + offset) },
        owner,
        { spec: { hostname: podName, subdomain: name } },
      );
    }
    const launcherName = `${name}-launcher`;
    const launcher = this.kube.object(JOBS, namespace, launcherName);
    if (!launcher) {
      const template = structuredClone(specs.Launcher!.template);
      template.metadata = {
        ...template.metadata,
        labels: { ...template.metadata?.labels, ...role("launcher") },
      };
      template.spec = {
        ...template.spec,
        hostname: launcherName,
        subdomain: name,
        restartPolicy: "OnFailure",
      };
      this.kube.createObject(JOBS, {
        metadata: { name: launcherName, namespace, labels: { app: name }, ownerReferences: [owner] },
        spec: { backoffLimit: mj.spec.runPolicy?.backoffLimit ?? 6, template },
      });
      this.actions.push(`create job ${namespace}/${launcherName}`);
      return;
    }
    const ended = holds(launcher, "Complete") ? "Succeeded" : holds(launcher, "Failed") ? "Failed" : null;
    if (!ended) return;
    const cleanup = mj.spec.runPolicy?.cleanPodPolicy ?? "None";
    if (cleanup === "Running" || cleanup === "All")
      for (const p of pods)
        if (cleanup === "All" || active(p)) this.kube.deletePod(namespace, p.metadata.name);
    this.setStatus(MPIJOBS, mj, {
      ...mj.status,
      conditions: [
        condition(
          ended,
          `MPIJob${ended}`,
          `MPIJob ${namespace}/${name} ${ended === "Succeeded" ? "successfully completed" : "has failed"}.`,
        ),
      ],
    });
  }
}
