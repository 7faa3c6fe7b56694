// Schemas of resource quantities, shared by every input that carries them.
import { z } from "zod";
import { parseBytes } from "../domain/quantities.js";

export const cpuMillis = z.int("cpu must be a whole number of millicores").min(0, "cpu must not be negative");

export const gpuMemoryMiB = z
  .int("gpuMemory must be a whole number of MiB")
  .min(0, "gpuMemory must not be negative");

/** Bytes from an integer, a decimal string or a quantity such as "16Gi". */
export const bytes = z.union([z.string(), z.number(), z.bigint()]).transform((v, ctx) => {
  const b = parseBytes(v);
  if (b === null) {
    ctx.addIssue({
      code: "custom",
      message: 'must be a non-negative number of bytes, e.g. "17179869184" or "16Gi"',
    });
    return z.NEVER;
  }
  return b;
});
