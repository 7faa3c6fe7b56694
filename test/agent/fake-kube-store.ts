// The state behind the fake Kubernetes API server: objects by kind with resourceVersions,
// the event history watches resume from (compactable, to provoke 410 Gone), and the live
// watchers. Objects are kept as the API server's JSON.

// biome-ignore lint/suspicious/noExplicitAny: free-form Kubernetes JSON, checked by the tests
export type Json = Record<string, any>;
export type Resource = "nodes" | "pods" | "services";
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

const KINDS: Record<Resource, string> = { nodes: "Node", pods: "Pod", services: "Service" };

export class FakeKubeStore {
  private rv = 100;
  private compactedBefore = 0;
  private uid = 0;
  readonly objects: Record<Resource, Map<string, Json>> = {
    nodes: new Map(),
    pods: new Map(),
    services: new Map(),
  };
  private history: StoredEvent[] = [];
  readonly watchers = new Set<Watcher>();

  get resourceVersion(): number {
    return this.rv;
  }

  /** Versions older than this have been compacted away: a watch from them gets 410. */
  get oldestResumable(): number {
    return this.compactedBefore;
  }

  get(resource: Resource, key: string): Json | undefined {
    return this.objects[resource].get(key);
  }

  list(resource: Resource, matches: (object: Json) => boolean): Json[] {
    return [...this.objects[resource].values()].filter(matches).map(clone);
  }

  create(resource: Resource, key: string, object: Json): Json {
    const metadata = object.metadata as Json;
    metadata.uid = `uid-${++this.uid}`;
    metadata.creationTimestamp = new Date().toISOString();
    return this.write(resource, key, object, "ADDED");
  }

  update(resource: Resource, key: string, mutate: (object: Json) => void): Json {
    const object = this.objects[resource].get(key);
    if (!object) throw new Error(`fake kube: no ${resource} ${key}`);
    const next = clone(object);
    mutate(next);
    return this.write(resource, key, next, "MODIFIED");
  }

  remove(resource: Resource, key: string): void {
    const object = this.objects[resource].get(key);
    if (!object) return;
    this.objects[resource].delete(key);
    this.record(resource, "DELETED", {
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(++this.rv) },
    });
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
    this.objects[resource].set(key, object);
    this.record(resource, type, object);
    return clone(object);
  }

  private record(resource: Resource, type: EventType, object: Json): void {
    const event: StoredEvent = {
      rv: this.rv,
      resource,
      type,
      object: { kind: KINDS[resource], apiVersion: "v1", ...clone(object) },
    };
    this.history.push(event);
    for (const watcher of this.watchers)
      if (watcher.resource === resource && watcher.matches(object)) watcher.send(event);
  }
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}
