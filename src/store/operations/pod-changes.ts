// Writing many pod state changes in one statement (a session commit can move thousands of pods).
import type { Tx } from "../db.js";
import type { PodState } from "../types.js";

export interface PodChange {
  id: string;
  state: PodState;
  /** The node the pod holds resources on / is nominated to; null clears it. */
  node: string | null;
  /** Absent = keep the current groups. */
  gpuGroups?: string[];
  /** Absent = keep the current devices. */
  gpuDevices?: number[];
  /** Why (a failed bind, an eviction); null clears the previous message. */
  message: string | null;
  /** The exit code the run ended with (absent = keep the current one). */
  exitCode?: number | null;
  /** The pod starts over (a gang restart): its run's times and exit code are cleared. */
  newRun?: boolean;
}

export async function writePodChanges(tx: Tx, changes: readonly PodChange[], now: Date): Promise<void> {
  if (!changes.length) return;
  const rows = JSON.stringify(
    changes.map((c) => ({
      id: c.id,
      state: c.state,
      node: c.node,
      gpu_groups: c.gpuGroups ?? null,
      gpu_devices: c.gpuDevices ?? null,
      message: c.message,
      // Only when set: a cycle's commit writes thousands of plain state changes.
      ...(c.exitCode !== undefined || c.newRun ? { set_exit: true, exit_code: c.exitCode ?? null } : {}),
      ...(c.newRun ? { new_run: true } : {}),
    })),
  );
  await tx.$executeRaw`
    UPDATE pod p SET
      state = v.state::"PodState",
      node_name = v.node,
      gpu_groups = COALESCE(v.gpu_groups, p.gpu_groups),
      gpu_devices = COALESCE(v.gpu_devices, p.gpu_devices),
      message = v.message,
      exit_code = CASE WHEN v.set_exit IS TRUE THEN v.exit_code ELSE p.exit_code END,
      updated_at = ${now},
      started_at = CASE WHEN v.new_run IS TRUE THEN NULL WHEN v.state = 'RUNNING' THEN COALESCE(p.started_at, ${now}) ELSE p.started_at END,
      finished_at = CASE WHEN v.new_run IS TRUE THEN NULL WHEN v.state IN ('SUCCEEDED', 'FAILED') THEN COALESCE(p.finished_at, ${now}) ELSE p.finished_at END
    FROM jsonb_to_recordset(${rows}::jsonb)
      AS v(id uuid, state text, node text, gpu_groups text[], gpu_devices int[], message text, exit_code int, set_exit boolean, new_run boolean)
    WHERE p.id = v.id`;
}
