// /healthz: the process answers. /readyz: it can reach PostgreSQL and Redis.
import type { Request, Response } from "express";
import { databaseAnswers, type RedisEventBus, type Store } from "../store/index.js";

export const healthz = (_req: Request, res: Response) => void res.json({ status: "ok" });

export function readyz(store: Store, bus: RedisEventBus) {
  return async (_req: Request, res: Response) => {
    const [database, redis] = await Promise.all([databaseAnswers(store), bus.ping()]);
    res
      .status(database && redis ? 200 : 503)
      .json({ status: database && redis ? "ready" : "not ready", database, redis });
  };
}
