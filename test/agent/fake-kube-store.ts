// The state behind the fake Kubernetes API server: objects by resource with resourceVersions,
// the event history watches resume from (compactable, to provoke 410 Gone), and the live
// watchers. Objects are kept as the API server's JSON. Besides nodes, pods and services, the
// resources of other API groups a test serves ("batch/jobs", "kubeflow.org/pytorchjobs").

// biome-ignore lint/suspicious/noExplicitAny: free-form Kubernetes JSON, checked by the tests
export type Json = Record<string, any>;
/** "nodes", "pods", "services", or "<group>/<plural>" of a served API group. */
export type Resource = string;
export type EventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoredEvent {
  rv: number;
  resource: Resource;
  type: EventType;
  object: Json;
}

export interface Watcher {
  resource: Resource;
  matches(object: Json): boolean;
  send(event: StoredEvent): void;
  close(): void;
}

export interface ResourceType {
  kind: string;
  apiVersion: string;
}

const CORE: Record<string, ResourceType> = {
  nodes: { kind: "Node", apiVersion: "v1" },
  pods: { kind: "Pod", apiVersion: "v1" },
  services: { kind: "Service", apiVersion: "v1" },
};

export class FakeKubeStore {
  private rv = 100;
  private compactedBefore = 0;
  private uid = 0;
  readonly objects: {
    nodes: Map<string, Json>;
    pods: Map<string, Json>;
    services: Map<string, Json>;
  } & Record<Resource, Map<string, Json>> = {
    nodes: new Map(),
    pods: new Map(),
    services: new Map(),
  };
  private readonly types: Record<Resource, ResourceType> = { ...CORE };
  private history: StoredEvent[] = [];
  readonly watchers = new Set<Watcher>();

  /** Starts serving a resource of another API group. */
  serve(resource: Resource, type: ResourceType): void {
    this.types[resource] = type;
    this.objects[resource] ??= new Map();
  }

  serves(resource: Resource): boolean {
    return resource in this.types;
  }

  typeOf(resource: Resource): ResourceType {
    return this.types[resource]!;
  }

  /** The resources served, core ones first. */
  resources(): Resource[] {
    return Object.keys(this.types);
  }

  get resourceVersion(): number {
    return this.rv;
  }

  /** Versions older than this have been compacted away: a watch from them gets 410. */
  get oldestResumable(): number {
    return this.compactedBefore;
  }

  get(resource: Resource, key: string): Json | undefined {
    return this.mapOf(resource).get(key);
  }

  list(resource: Resource, matches: (object: Json) => boolean): Json[] {
    return [...this.mapOf(resource).values()].filter(matches).map(clone);
  }

  create(resource: Resource, key: string, object: Json): Json {
    const metadata = object.metadata as Json;
    metadata.uid = `uid-${++this.uid}`;
    metadata.creationTimestamp = new Date().toISOString();
    return this.write(resource, key, object, "ADDED");
  }

  update(resource: Resource, key: string, mutate: (object: Json) => void): Json {
    const object = this.mapOf(resource).get(key);
    if (!object) throw new Error(`fake kube: no ${resource} ${key}`);
    const next = clone(object);
    mutate(next);
    return this.write(resource, key, next, "MODIFIED");
  }

  remove(resource: Resource, key: string): void {
    const object = this.mapOf(resource).get(key);
    if (!object) return;
    this.mapOf(resource).delete(key);
    this.record(resource, "DELETED", {
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(++this.rv) },
    });
  }

  private mapOf(resource: Resource): Map<string, Json> {
    const map = this.objects[resource];
    if (!map) throw new Error(`fake kube: ${resource} is not served`);
    return map;
  }

  /** Events after `rv` for a resumed watch. */
  since(resource: Resource, rv: number): StoredEvent[] {
    return this.history.filter((event) => event.resource === resource && event.rv > rv);
  }

  /** Forget the history: watches resuming from any older version get 410 Gone. */
  compact(): void {
    this.compactedBefore = this.rv;
    this.history = [];
  }

  private write(resource: Resource, key: string, object: Json, type: EventType): Json {
    object.metadata.resourceVersion = String(++this.rv);
    this.mapOf(resource).set(key, object);
    this.record(resource, type, object);
    return clone(object);
  }

  private record(resource: Resource, type: EventType, object: Json): void {
    const event: StoredEvent = {
      rv: this.rv,
      resource,
      type,
      object: { ...this.types[resource], ...clone(object) },
    };
    this.history.push(event);
    for (const watcher of this.watchers)
      if (watcher.resource === resource && watcher.matches(object)) watcher.send(event);
  }
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}
