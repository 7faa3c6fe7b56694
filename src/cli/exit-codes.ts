// The process exit codes of `fleetq`, part of its contract with CI pipelines (docs/cli.md).
export const EXIT = {
  /** The command did what was asked; `submit --wait`: the job succeeded. */
  OK: 0,
  /** `submit --wait`: the job failed or was cancelled. */
  JOB_FAILED: 1,
  /** `submit --wait --timeout`: the job had not finished in time. */
  TIMED_OUT: 2,
  /** Refused: a bad spec or argument, an unknown object, no permission, no or a bad token. */
  REJECTED: 3,
  /** The API could not be reached or failed on its side: worth retrying. */
  UNAVAILABLE: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the command reports as one line on stderr before exiting with `exitCode`. */
export class CliError extends Error {
  override name = "CliError";
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.REJECTED,
  ) {
    super(message);
  }
}
