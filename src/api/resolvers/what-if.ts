// clusterScenario and whatIf (ADMIN): the live cluster as a scenario file, and one scheduling cycle
// on the live snapshot with changed quotas. Both only read: the snapshot is loaded, the core runs
// in memory, nothing is written.
import {
  ConfigError,
  defaultPluginRegistry,
  defaultSchedulerConfig,
  loadSchedulerConfig,
  type SchedulerConfig,
} from "../../core/index.js";
import { snapshotScenario } from "../../simulate/from-snapshot.js";
import { type QuotaChange, type QuotaKey, WhatIfInputError, whatIf } from "../../simulate/what-if.js";
import { loadSnapshot } from "../../store/index.js";
import { adminOnly, guarded } from "../auth.js";
import type { ApiContext } from "../context.js";
import { asArgs, badInput } from "../errors.js";
import { resourcesOfQuota } from "../views.js";

const RESOURCE_KEYS: Record<string, QuotaKey> = { GPU: "gpu", CPU: "cpuMillis", MEMORY: "memory" };

interface QuotaInput {
  queue: string;
  resource: string;
  deserved?: number | null;
  limit?: number | null;
}

function configOf(doc: unknown, ctx: ApiContext): SchedulerConfig {
  if (doc === undefined || doc === null) return ctx.schedulerConfig ?? defaultSchedulerConfig();
  try {
    return loadSchedulerConfig(doc, defaultPluginRegistry().names());
  } catch (e) {
    if (e instanceof ConfigError) throw badInput(`config.${e.field}`, `config.${e.message}`);
    throw badInput("config", `not a scheduler configuration: ${(e as Error).message}`);
  }
}

export const whatIfResolvers = {
  Query: {
    clusterScenario: guarded(adminOnly, asArgs, async (a: { cluster: string }, ctx: ApiContext) => {
      const { snapshot } = await loadSnapshot(ctx.store, a.cluster);
      return snapshotScenario(snapshot, ctx.schedulerConfig ?? defaultSchedulerConfig(), {
        name: `cluster ${a.cluster} at ${new Date(snapshot.now).toISOString()}`,
        source: "fleetq snapshot export",
      });
    }),
    whatIf: guarded(
      adminOnly,
      asArgs,
      async (a: { cluster: string; quotas?: QuotaInput[] | null; config?: unknown }, ctx: ApiContext) => {
        const config = configOf(a.config, ctx);
        const changes: QuotaChange[] = (a.quotas ?? []).map((q) => ({
          queue: q.queue,
          resource: RESOURCE_KEYS[q.resource]!,
          deserved: q.deserved,
          limit: q.limit,
        }));
        // Time-based fair share as the workers' cycles see it.
        const { snapshot } = await loadSnapshot(ctx.store, a.cluster, {
          usage: ctx.usageWindow ?? undefined,
        });
        let report: ReturnType<typeof whatIf>;
        try {
          report = whatIf(snapshot, config, changes);
        } catch (e) {
          if (e instanceof WhatIfInputError) throw badInput(e.field, e.message);
          throw e;
        }
        const r = resourcesOfQuota;
        return {
          cluster: a.cluster,
          starts: report.starts,
          pipelined: report.pipelined,
          evictions: report.evictions,
          queues: report.queues.map((q) => ({
            queue: q.queue,
            deservedBefore: r(q.deservedBefore),
            deservedAfter: r(q.deservedAfter),
            fairShareBefore: r(q.fairShareBefore),
            fairShareAfter: r(q.fairShareAfter),
            allocatedBefore: r(q.allocatedBefore),
            allocatedAfter: r(q.allocatedAfter),
          })),
        };
      },
    ),
  },
};
