// A cheap test an accumulated scenario must pass before it is simulated.
import type { VictimScenario } from "../victim-scenario.js";

export interface ScenarioFilter {
  readonly name: string;
  /** Sees every scenario of one builder in order (victims only accumulate). */
  accepts(scenario: VictimScenario): boolean;
}
