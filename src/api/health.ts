// /healthz: the process answers. /readyz: it can reach PostgreSQL and Redis.
import type { Request, Response } from "express";
import type { RedisEventBus } from "../store/redis-events.js";
import type { Store } from "../store/store.js";

export const healthz = (_req: Request, res: Response) => void res.json({ status: "ok" });

export function readyz(store: Store, bus: RedisEventBus) {
  return async (_req: Request, res: Response) => {
    const [database, redis] = await Promise.all([
      store.prisma.$queryRaw`SELECT 1::text AS ok`.then(
        () => true,
        () => false,
      ),
      bus.ping(),
    ]);
    res
      .status(database && redis ? 200 : 503)
      .json({ status: database && redis ? "ready" : "not ready", database, redis });
  };
}
