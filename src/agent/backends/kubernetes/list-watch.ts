// List, then watch from the list's resourceVersion; after a dropped connection resume the
// watch from the last resourceVersion seen; when the server says that version is gone
// (410, as an HTTP status or as an ERROR event) list again and start over. The caller
// gets the complete set on every (re)list and the events in between.
import type { Watch } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { backoffDelay, sleep, type BackoffPolicy } from "../../backoff.js";
import { httpStatus, statusMessage } from "./kube-errors.js";

export interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export interface ListWatchOptions<T extends KubeObject> {
  /** For logs: "nodes", "pods". */
  name: string;
  list(): Promise<{ items: T[]; resourceVersion: string }>;
  watch: Watch;
  /** The collection's URL path, e.g. /api/v1/nodes. */
  path: string;
  query?: Record<string, string>;
  onList(items: T[]): void;
  onEvent(type: WatchEventType, object: T): void;
  backoff: BackoffPolicy;
  log: Logger;
}

type WatchEnd = { kind: "gone" } | { kind: "closed" } | { kind: "failed"; err: unknown };

export class ListWatch<T extends KubeObject> {
  private readonly stopController = new AbortController();
  private current: AbortController | null = null;
  private loop: Promise<void> | null = null;
  /** Lists so far: tests and logs see relists. */
  lists = 0;

  constructor(private readonly options: ListWatchOptions<T>) {}

  /** Resolves after the first complete list was delivered. */
  start(): Promise<void> {
    return new Promise((resolve) => {
      this.loop = this.run(resolve);
    });
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    this.current?.abort();
    await this.loop;
  }

  private async run(listed: () => void): Promise<void> {
    const { log, name } = this.options;
    const signal = this.stopController.signal;
    let resourceVersion: string | null = null;
    let failures = 0;
    /** 410s in a row with nothing watched in between: a server stuck answering Gone. */
    let gones = 0;
    while (!signal.aborted) {
      if (resourceVersion === null) {
        try {
          const list = await this.options.list();
          if (signal.aborted) return;
          this.lists++;
          this.options.onList(list.items);
          resourceVersion = list.resourceVersion;
          failures = 0;
          listed();
        } catch (err) {
          const delay = backoffDelay(failures++, this.options.backoff);
          log.warn({ err: statusMessage(err), retryInMs: delay }, `listing ${name} failed; retrying`);
          await sleep(delay, signal);
          continue;
        }
      }
      const end: WatchEnd = await this.watchFrom(resourceVersion, (rv) => {
        resourceVersion = rv;
        gones = 0;
      });
      if (end.kind === "gone") {
        log.info(`${name}: resourceVersion ${resourceVersion} is gone; listing again`);
        resourceVersion = null;
        if (gones++ > 0) await sleep(backoffDelay(gones - 2, this.options.backoff), signal);
      } else if (end.kind === "failed" && !signal.aborted) {
        const delay = backoffDelay(failures++, this.options.backoff);
        log.warn({ err: statusMessage(end.err), retryInMs: delay }, `watching ${name} failed; resuming`);
        await sleep(delay, signal);
      } else {
        failures = 0; // a normal end (server timeout): resume at once
      }
    }
  }

  private watchFrom(resourceVersion: string, seen: (rv: string) => void): Promise<WatchEnd> {
    return new Promise((settle) => {
      const stopSignal = this.stopController.signal;
      // A watch still connecting has no controller yet: stopping must not wait for it.
      const onStop = () => settle({ kind: "closed" });
      stopSignal.addEventListener("abort", onStop, { once: true });
      const resolve = (value: WatchEnd) => {
        stopSignal.removeEventListener("abort", onStop);
        settle(value);
      };
      let end: WatchEnd | null = null;
      const query = {
        ...this.options.query,
        resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: 300,
      };
      const onEvent = (type: string, object: unknown) => {
        if (type === "ERROR") {
          // The server sends a Status and closes: 410 = our version was compacted away.
          const status = object as { code?: number; message?: string };
          end =
            status.code === 410
              ? { kind: "gone" }
              : { kind: "failed", err: new Error(status.message ?? "watch error") };
          this.current?.abort();
          return;
        }
        const rv = (object as KubeObject).metadata?.resourceVersion;
        if (rv) seen(rv);
        if (type === "ADDED" || type === "MODIFIED" || type === "DELETED")
          this.options.onEvent(type, object as T);
      };
      const onDone = (err: unknown) => {
        if (end) return resolve(end);
        if (!err || this.stopController.signal.aborted) return resolve({ kind: "closed" });
        resolve(httpStatus(err) === 410 ? { kind: "gone" } : { kind: "failed", err });
      };
      // watch() rejects on setup errors instead of calling done: route both to one place.
      this.options.watch.watch(this.options.path, query, onEvent, onDone).then(
        (controller) => {
          this.current = controller;
          if (this.stopController.signal.aborted) controller.abort();
        },
        (err) => onDone(err ?? new Error("watch setup failed")),
      );
    });
  }
}
