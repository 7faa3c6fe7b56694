// Deterministic bounds on the victim search (KAI bounds it by time, search_budget.go; the
// core has no clock, so here the unit is the scenario examined: the GPU-count test, and the
// simulations on the nodes of its newest victim if that passes). Each disruptive action may
// examine at most `maxScenariosPerAction` scenarios, and each job's attempt at most
// `maxScenariosPerJob` of them. An attempt that reaches a bound stops: the job is not
// solved this cycle, says why in a fit error, and leaves a cursor to go on from next cycle
// (search-resume). Searches going on from a cursor may take at most half of the action's
// budget, so that long searches at the head of the order cannot keep the jobs behind them
// from being attempted cycle after cycle. -1 means unlimited.
import type { JobInfo } from "../../../api/podgroup-info.js";
import type { ActionName } from "../../../api/result.js";
import type { SessionParams } from "../../../framework/config.js";

export class ActionSearchBudget {
  private spent = 0;
  /** Of `spent`, what searches going on from a cursor took. */
  private spentResuming = 0;

  constructor(
    readonly action: ActionName,
    private readonly perJob: number,
    private readonly perAction: number,
  ) {}

  static of(action: ActionName, params: SessionParams): ActionSearchBudget {
    return new ActionSearchBudget(action, params.maxScenariosPerJob, params.maxScenariosPerAction);
  }

  /** The budget of one job's attempt; `resuming`: it goes on from a cursor. */
  beginJob(resuming = false): JobSearchBudget {
    return new JobSearchBudget(this, this.perJob, resuming);
  }

  /** Count one scenario against the action; false when its budget (or the resuming share) is spent. */
  take(resuming: boolean): boolean {
    if (resuming ? this.resumingExhausted : this.exhausted) return false;
    this.spent++;
    if (resuming) this.spentResuming++;
    return true;
  }

  /** No scenario may be examined any more in this action. */
  get exhausted(): boolean {
    return this.perAction >= 0 && this.spent >= this.perAction;
  }

  /** No search going on from a cursor may examine another scenario in this action. */
  get resumingExhausted(): boolean {
    return this.exhausted || (this.perAction >= 0 && this.spentResuming >= Math.ceil(this.perAction / 2));
  }

  get actionLimit(): number {
    return this.perAction;
  }
}

export class JobSearchBudget {
  /** Scenarios examined so far in this attempt. */
  scenarios = 0;
  /** Which bound stopped the search, if one did. */
  stoppedBy: "maxScenariosPerJob" | "maxScenariosPerAction" | null = null;

  constructor(
    private readonly action: ActionSearchBudget,
    private readonly limit: number,
    /** The search goes on from a cursor (it draws on the action's resuming share). */
    readonly resuming: boolean,
  ) {}

  get stopped(): boolean {
    return this.stoppedBy !== null;
  }

  /** Count one scenario about to be examined; false (and stopped) when no more are allowed. */
  take(): boolean {
    if (this.stoppedBy) return false;
    if (this.limit >= 0 && this.scenarios >= this.limit) this.stoppedBy = "maxScenariosPerJob";
    else if (!this.action.take(this.resuming)) this.stoppedBy = "maxScenariosPerAction";
    else {
      this.scenarios++;
      return true;
    }
    return false;
  }

  /** The fit error of a job whose search this budget stopped. */
  message(job: JobInfo): string {
    const limit = this.stoppedBy === "maxScenariosPerJob" ? this.limit : this.action.actionLimit;
    const share =
      this.stoppedBy === "maxScenariosPerAction" && this.resuming && !this.action.exhausted
        ? ", half of it for searches going on from an earlier cycle"
        : "";
    return (
      `${this.action.action}: search stopped after ${this.scenarios} scenarios for ${job.namespace}/${job.name} ` +
      `(${this.stoppedBy} = ${limit}${share}); it is tried again next cycle`
    );
  }
}
