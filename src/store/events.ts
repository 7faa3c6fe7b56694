// Events: the audit log rows every operation writes in its transaction, and what is published
// (after commit) to the subscribers — Job.events, jobUpdated, queueEvents.

/** An event as stored and as published. */
export interface StoreEvent {
  id: string;
  /** ISO-8601 */
  at: string;
  kind: string;
  message: string;
  job: string | null;
  queue: string | null;
  cluster: string | null;
  actor: string | null;
}

/** What an operation records; the row gets its id and time from the database. */
export interface NewEvent {
  kind: string;
  message: string;
  job?: string | null;
  queue?: string | null;
  cluster?: string | null;
}

export type RecordEvent = (e: NewEvent) => void;

/** Where committed events go (Redis pub/sub in a deployment). Must not throw. */
export interface EventSink {
  publish(events: readonly StoreEvent[]): Promise<void>;
}

export const discardEvents: EventSink = { publish: async () => {} };

/** An event row as the database returns it. */
export interface EventRow {
  id: bigint;
  at: Date;
  kind: string;
  message: string;
  jobId: string | null;
  queueName: string | null;
  clusterName: string | null;
  actor: string | null;
}

export function toStoreEvent(row: EventRow): StoreEvent {
  return {
    id: row.id.toString(),
    at: row.at.toISOString(),
    kind: row.kind,
    message: row.message,
    job: row.jobId,
    queue: row.queueName,
    cluster: row.clusterName,
    actor: row.actor,
  };
}
