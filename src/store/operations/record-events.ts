// Events that are not a side effect of a state change: what the workers did (a scheduling cycle,
// an admission pass), for the event log and its subscribers. One transaction, published after.
import type { NewEvent } from "../events.js";
import { type Actor, type Store, transact } from "../store.js";

export async function recordEvents(store: Store, actor: Actor, events: readonly NewEvent[]): Promise<void> {
  if (!events.length) return;
  await transact(store, actor, async (_tx, record) => {
    for (const e of events) record(e);
  });
}
