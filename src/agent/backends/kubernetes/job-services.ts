// The headless Service of each multi-pod job (src/render/service.ts), kept alive by its pods:
// every pod fleetq creates for the job becomes one of its owners, so the garbage collector takes
// the Service away once the job's last pod is gone. Created with the first pod; each later pod
// is added to its owners; a Service garbage-collected between two attempts of a job is created
// again with the next attempt's first pod.
import type { CoreV1Api, V1OwnerReference, V1Pod } from "@kubernetes/client-node";
import { JOB_ID_KEY } from "../../../protocol/labels.js";
import { type RenderJob, renderService } from "../../../render/index.js";
import { httpStatus } from "./kube-errors.js";

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

/** A Service of that name exists that belongs to another job (or to nobody of ours). */
class ForeignServiceError extends Error {}

export class JobServices {
  constructor(
    private readonly api: CoreV1Api,
    private readonly call: Call,
  ) {}

  /** Makes sure the job's Service exists and `pod` is among its owners (a one-pod job has none). */
  async ensure(job: RenderJob, pod: V1Pod): Promise<void> {
    const service = renderService(job);
    if (!service) return;
    const name = service.metadata!.name!;
    const namespace = job.namespace;
    const owner = ownerOf(pod);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.call(`create service ${name}`, () =>
          this.api.createNamespacedService({
            namespace,
            body: { ...service, metadata: { ...service.metadata, ownerReferences: [owner] } },
          }),
        );
        return;
      } catch (err) {
        if (httpStatus(err) !== 409) throw err;
      }
      try {
        await this.addOwner(namespace, name, job, owner);
        return;
      } catch (err) {
        // Garbage-collected since our create was refused (404): create it again; changed by
        // another pod of the gang between our read and patch (the test failed, 422): again.
        const status = httpStatus(err);
        if (status !== 404 && status !== 422 && status !== 409) throw err;
      }
    }
    throw new Error(`service ${namespace}/${name} kept changing while this pod was made one of its owners`);
  }

  private async addOwner(namespace: string, name: string, job: RenderJob, owner: V1OwnerReference) {
    const existing = await this.call(`read service ${name}`, () =>
      this.api.readNamespacedService({ name, namespace }),
    );
    if (existing.metadata?.annotations?.[JOB_ID_KEY] !== job.id)
      throw new ForeignServiceError(`a Service named ${name} exists that is not job ${job.id}'s`);
    const owners = existing.metadata?.ownerReferences ?? [];
    if (owners.some((o) => o.uid === owner.uid)) return;
    // The test guards against a concurrent change of the owners (another pod of the gang).
    const body = [
      { op: "test", path: "/metadata/resourceVersion", value: existing.metadata?.resourceVersion },
      owners.length
        ? { op: "add", path: "/metadata/ownerReferences/-", value: owner }
        : { op: "add", path: "/metadata/ownerReferences", value: [owner] },
    ];
    await this.call(`own service ${name}`, () => this.api.patchNamespacedService({ name, namespace, body }));
  }
}

function ownerOf(pod: V1Pod): V1OwnerReference {
  return { apiVersion: "v1", kind: "Pod", name: pod.metadata?.name ?? "", uid: pod.metadata?.uid ?? "" };
}
