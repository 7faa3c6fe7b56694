// Schemas of resource quantities, shared by every input that carries them.
import { z } from "zod";
import { parseBytes } from "../domain/quantities.js";

/** The largest value of a PostgreSQL integer column (cpu, gpus, gpuMemory, counts). */
export const INT4_MAX = 2 ** 31 - 1;
/** The largest value of a PostgreSQL bigint column (memory in bytes). */
export const INT8_MAX = 2n ** 63n - 1n;

export const cpuMillis = z
  .int("cpu must be a whole number of millicores")
  .min(0, "cpu must not be negative")
  .max(INT4_MAX, `cpu must be at most ${INT4_MAX} millicores`);

export const gpuMemoryMiB = z
  .int("gpuMemory must be a whole number of MiB")
  .min(0, "gpuMemory must not be negative")
  .max(INT4_MAX, `gpuMemory must be at most ${INT4_MAX} MiB`);

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
  if (b > INT8_MAX) {
    ctx.addIssue({ code: "custom", message: `must be at most ${INT8_MAX} bytes` });
    return z.NEVER;
  }
  return b;
});
