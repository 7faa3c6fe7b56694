// Events: the audit log rows every operation writes in its transaction, and what is published
// (after commit) to the subscribers — Job.events, jobUpdated, queueEvents.

/** What a scheduling cycle's event (cycle.completed, cycle.failed) carries besides its message. */
export interface CycleEventData {
  /** The worker that ran the cycle. */
  worker: string;
  /** ISO-8601 */
  startedAt: string;
  /** ISO-8601 */
  endedAt: string;
  /** Where the time went (ms, over every attempt). */
  timings: { loadMs: number; sessionMs: number; commitMs: number; dispatchMs: number };
}

/** What a job's first `job.running` event carries: how long it waited since it was submitted. */
export interface JobStartEventData {
  waitSeconds: number;
}

/** What a `bind.result` event carries: per bind of the job that succeeded, the seconds from its
 * commit (the scheduler's decision) to the agent's report of its success. */
export interface BindResultEventData {
  bindSeconds: number[];
}

/** The structured part of an event, one shape per kind that has one. */
export type EventData = CycleEventData | JobStartEventData | BindResultEventData;

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
  data: EventData | null;
}

/** What an operation records; the row gets its id and time from the database. */
export interface NewEvent {
  kind: string;
  message: string;
  job?: string | null;
  queue?: string | null;
  cluster?: string | null;
  data?: EventData | null;
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
  /** Absent where a statement writes only kinds without data. */
  data?: unknown;
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
    data: eventData(row.data),
  };
}

/** A row's JSON as the data of its kind: the store writes it only from a typed NewEvent. */
export const eventData = (json: unknown): EventData | null => (json ?? null) as EventData | null;
