// Resource quantities as the API spells them: cpu in millicores, memory in bytes (a decimal
// string, or a Kubernetes quantity such as "16Gi"), gpu in devices (fractions below 1 share one
// device), gpuMemory in MiB.

const SUFFIX: Record<string, bigint> = {
  "": 1n,
  k: 1000n,
  M: 1000n ** 2n,
  G: 1000n ** 3n,
  T: 1000n ** 4n,
  P: 1000n ** 5n,
  Ki: 1024n,
  Mi: 1024n ** 2n,
  Gi: 1024n ** 3n,
  Ti: 1024n ** 4n,
  Pi: 1024n ** 5n,
};

/** Bytes from a non-negative integer, a decimal string or a quantity like "512Mi"; null if invalid. */
export function parseBytes(value: unknown): bigint | null {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : null;
  if (typeof value === "bigint") return value >= 0n ? value : null;
  if (typeof value !== "string") return null;
  const m = /^(\d+)(k|M|G|T|P|Ki|Mi|Gi|Ti|Pi)?$/.exec(value.trim());
  if (!m) return null;
  return BigInt(m[1]!) * SUFFIX[m[2] ?? ""]!;
}

/** A pod's request in the store's (and the core's) terms. */
export interface PodRequestColumns {
  cpuMillis: number;
  memory: bigint;
  gpus: number;
  gpuFraction: number;
  gpuMemory: number;
}

/** gpu: a whole number of devices, or a fraction (0,1) of one device. Validated by the caller. */
export function splitGpu(gpu: number): { gpus: number; gpuFraction: number } {
  return Number.isInteger(gpu) ? { gpus: gpu, gpuFraction: 0 } : { gpus: 0, gpuFraction: gpu };
}

/** The GPU amount of a request as the API shows it (devices, fractions included). */
export const gpuAmount = (r: { gpus: number; gpuFraction: number }): number => r.gpus + r.gpuFraction;
