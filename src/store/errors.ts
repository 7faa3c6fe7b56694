// Typed failures of store operations. The API turns them into GraphQL error codes; the CLI and
// workers can match on them. Every operation throws before changing anything, or rolls back.

/** Bad input; `field` is the path of the offending value inside the operation's input
 * (e.g. "tasks[0].resources.gpu"). → BAD_USER_INPUT */
export class InvalidInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = "InvalidInputError";
  }
}

/** A named thing does not exist. → NOT_FOUND */
export class NotFoundError extends Error {
  constructor(
    readonly kind: string,
    readonly key: string,
    /** The input path that named it, when the name came from input. */
    readonly field?: string,
  ) {
    super(`${kind} "${key}" not found`);
    this.name = "NotFoundError";
  }
}

/** The request is valid but conflicts with the current state (non-empty queue, reused key…). → CONFLICT */
export class ConflictError extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "ConflictError";
  }
}

/** The worker no longer holds the cluster's lease (it lapsed, or another worker took it): its
 * commit is refused. */
export class LeaseLostError extends Error {
  constructor(
    readonly cluster: string,
    readonly worker: string,
    /** The epoch the worker held; null: it holds no lease on the cluster any more. */
    readonly epoch: number | null,
    readonly currentOwner: string | null,
    readonly currentEpoch: number | null,
  ) {
    super(
      `worker "${worker}" no longer holds cluster "${cluster}" (` +
        (epoch === null ? "its lease is gone" : `its lease of epoch ${epoch}`) +
        "; now " +
        (currentOwner ? `"${currentOwner}" at epoch ${currentEpoch}` : "no live owner known") +
        ")",
    );
    this.name = "LeaseLostError";
  }
}

/** The cluster's generation moved since the snapshot a session ran on: its result is refused. */
export class StaleSnapshotError extends Error {
  constructor(
    readonly cluster: string,
    readonly seenGeneration: number,
    readonly currentGeneration: number | null,
  ) {
    super(
      currentGeneration === null
        ? `cluster "${cluster}" no longer exists`
        : `cluster "${cluster}" moved from generation ${seenGeneration} to ${currentGeneration} since the snapshot`,
    );
    this.name = "StaleSnapshotError";
  }
}

/** The caller may not ask for this (e.g. a namespace its queue does not allow). → FORBIDDEN */
export class ForbiddenError extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "ForbiddenError";
  }
}
