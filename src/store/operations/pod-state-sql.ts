// The pod states that hold a node, as an SQL list for raw statements (one definition:
// RESOURCE_HOLDING_POD_STATES).
import { RESOURCE_HOLDING_POD_STATES } from "../domain/pod-states.js";
import { Prisma } from "../generated/prisma/client.js";

/** `'BINDING', 'RUNNING', …` for `state IN (…)`. */
export const HOLDING_STATES_SQL = Prisma.raw(RESOURCE_HOLDING_POD_STATES.map((s) => `'${s}'`).join(", "));
