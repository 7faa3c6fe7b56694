// Every action the core knows, by name, run in the order the configuration lists them.
import type { ActionName } from "../api/result.js";
import type { Action } from "../framework/session.js";
import * as allocate from "./allocate/index.js";
import * as consolidation from "./consolidation/index.js";
import * as preempt from "./preempt/index.js";
import * as reclaim from "./reclaim/index.js";
import * as stalegangeviction from "./stalegangeviction/index.js";

const ACTIONS: Record<ActionName, () => Action> = {
  allocate: allocate.create,
  consolidation: consolidation.create,
  reclaim: reclaim.create,
  preempt: preempt.create,
  stalegangeviction: stalegangeviction.create,
};

export function createAction(name: ActionName): Action {
  const f = ACTIONS[name];
  if (!f) throw new Error(`action ${name} is not available`);
  return f();
}
