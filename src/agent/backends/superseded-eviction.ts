// An eviction decided at an older cluster generation than the bind that started the pod's
// current run was meant for an earlier run of the pod: carried out now (a restarted agent, which
// has lost its per-pod order, or a request delivered again) it would stop a run the control
// plane placed afterwards. The run stays and the eviction is answered done.
import type { BindRequestMessage } from "../../protocol/bind-request.js";
import type { RequestOutcome } from "./types.js";

/** null: the eviction is for the current run (or the run's bind generation is unknown). */
export function supersededEviction(
  request: BindRequestMessage,
  bindGeneration: number | null,
): RequestOutcome | null {
  if (bindGeneration === null || !(request.generation < bindGeneration)) return null;
  return {
    ok: true,
    message: `superseded: pod ${request.pod.name} was bound again (generation ${bindGeneration}) after this eviction was decided (generation ${request.generation})`,
  };
}
