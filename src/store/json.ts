// Values for Prisma Json columns: our plain-data types are JSON-safe but not typed as Prisma's JSON.
import type { Prisma } from "./generated/prisma/client.js";

export const toJson = (value: unknown): Prisma.InputJsonValue => value as Prisma.InputJsonValue;
