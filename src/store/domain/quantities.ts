// Resource quantities as the API spells them: cpu in millicores, memory in bytes (a decimal
// string, or a Kubernetes quantity such as "16Gi"), gpu in devices (fractions below 1 share one
// device), gpuMemory in MiB.

export { parseBytes } from "../../protocol/quantity.js";

/** gpu: a whole number of devices, or a fraction (0,1) of one device. Validated by the caller. */
export function splitGpu(gpu: number): { gpus: number; gpuFraction: number } {
  return Number.isInteger(gpu) ? { gpus: gpu, gpuFraction: 0 } : { gpus: 0, gpuFraction: gpu };
}
