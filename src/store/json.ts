// Values for Prisma Json columns: our plain-data types are JSON-safe but not typed as Prisma's JSON.
import { Prisma } from "./generated/prisma/client.js";

export const toJson = (value: unknown): Prisma.InputJsonValue => value as Prisma.InputJsonValue;

/** null → SQL NULL (not the JSON value null). */
export const toNullableJson = (value: unknown): Prisma.InputJsonValue | typeof Prisma.DbNull =>
  value === null || value === undefined ? Prisma.DbNull : (value as Prisma.InputJsonValue);
