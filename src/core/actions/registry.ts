// Every action the core knows, by name, run in the order the configuration lists them.
import type { ActionName } from "../api/result.js";
import type { Action } from "../framework/session.js";
import * as allocate from "./allocate/index.js";
import * as stalegangeviction from "./stalegangeviction/index.js";

const ACTIONS: Partial<Record<ActionName, () => Action>> = {
  allocate: allocate.create,
  stalegangeviction: stalegangeviction.create,
};

export function createAction(name: ActionName): Action {
  const f = ACTIONS[name];
  if (!f) throw new Error(`action ${name} is not available`);
  return f();
}
