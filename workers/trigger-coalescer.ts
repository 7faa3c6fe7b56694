// Events arrive in bursts (an agent's report batch is one event per job): triggers are gathered
// for one turn of the event loop and sent as one trigger per cluster and one for admission.
import { REPORT_TRIGGER, type Triggers } from "./triggers.js";

export interface TriggerTargets {
  cycles(clusters: readonly string[] | "all", reason: string): Promise<void>;
  admission(reason: string): Promise<void>;
  clusterList(): Promise<void>;
  restarts(reason: string): Promise<void>;
}

export class TriggerCoalescer {
  private cycles = new Set<string>();
  private reported = new Set<string>();
  private allCycles = false;
  private admission = false;
  private clusterList = false;
  private restarts = false;
  private scheduled = false;

  constructor(
    private readonly targets: TriggerTargets,
    private readonly onError: (err: Error) => void,
  ) {}

  add(t: Triggers): void {
    if (t.cycles === "all") this.allCycles = true;
    else for (const c of t.cycles) this.cycles.add(c);
    for (const c of t.reported) this.reported.add(c);
    this.admission ||= t.admission;
    this.clusterList ||= t.clusterList;
    this.restarts ||= t.restarts ?? false;
    const any =
      this.allCycles ||
      this.cycles.size ||
      this.reported.size ||
      this.admission ||
      this.clusterList ||
      this.restarts;
    if (!this.scheduled && any) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
  }

  private async flush(): Promise<void> {
    const cycles = this.allCycles ? ("all" as const) : [...this.cycles];
    const reported = [...this.reported].filter((c) => !this.cycles.has(c));
    const { admission, clusterList, restarts } = this;
    this.cycles = new Set();
    this.reported = new Set();
    this.allCycles = this.admission = this.clusterList = this.restarts = this.scheduled = false;
    try {
      if (clusterList) await this.targets.clusterList();
      if (cycles === "all" || cycles.length) await this.targets.cycles(cycles, "event");
      if (cycles !== "all" && reported.length) await this.targets.cycles(reported, REPORT_TRIGGER);
      if (admission) await this.targets.admission("event");
      if (restarts) await this.targets.restarts("event");
    } catch (err) {
      this.onError(err as Error);
    }
  }
}
