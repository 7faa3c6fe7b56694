// Kubernetes resource quantities ("500m", "1.5", "16Gi", "1e3", "128974848Ki"): the one parser of
// the API's inputs, the agents' reports and the cluster files. Exact (a decimal mantissa times a
// power of ten and a suffix, kept as a fraction of big integers) so byte counts never lose digits.

const DECIMAL_SUFFIX: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIX: Record<string, bigint> = {
  Ki: 2n ** 10n,
  Mi: 2n ** 20n,
  Gi: 2n ** 30n,
  Ti: 2n ** 40n,
  Pi: 2n ** 50n,
  Ei: 2n ** 60n,
};

const QUANTITY = /^([+-]?)(\d+\.?\d*|\.\d+)(?:[eE]([+-]?\d+))?(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;

/** A quantity as an exact fraction num/den (den > 0); null if it is not a quantity. */
function exact(quantity: string): { num: bigint; den: bigint } | null {
  const m = QUANTITY.exec(quantity.trim());
  if (!m) return null;
  const [, sign, mantissa, exponent, suffix = ""] = m;
  const [whole = "", fraction = ""] = mantissa!.split(".");
  let num = BigInt(`${whole}${fraction}` || "0");
  let den = 1n;
  let power = Number(exponent ?? 0) - fraction.length;
  if (suffix in BINARY_SUFFIX) num *= BINARY_SUFFIX[suffix]!;
  else power += DECIMAL_SUFFIX[suffix]!;
  if (Math.abs(power) > 100) return null; // far beyond any resource: refused rather than computed
  if (power >= 0) num *= 10n ** BigInt(power);
  else den = 10n ** BigInt(-power);
  return { num: sign === "-" ? -num : num, den };
}

/** The quantity's value in base units (a number as is); throws on a malformed quantity. */
export function parseQuantity(quantity: string | number): number {
  if (typeof quantity === "number") return quantity;
  const q = exact(quantity);
  if (!q) throw new Error(`not a Kubernetes quantity: "${quantity}"`);
  return Number(q.num) / Number(q.den);
}

/** CPU quantity ("2", "500m") in millicores. */
export function cpuMillis(quantity: string | number): number {
  return Math.round(parseQuantity(quantity) * 1000);
}

/** Memory quantity ("16Gi") in bytes, as a number (agents' reports and manifests). */
export function bytes(quantity: string | number): number {
  return Math.round(parseQuantity(quantity));
}

/**
 * Bytes from a non-negative integer, a decimal string or a quantity ("512Mi", "1.5Gi"), a
 * fraction of a byte rounded up (as Kubernetes does); null if it is none of these or negative.
 */
export function parseBytes(value: unknown): bigint | null {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : null;
  if (typeof value === "bigint") return value >= 0n ? value : null;
  if (typeof value !== "string") return null;
  const q = exact(value);
  if (!q || q.num < 0n) return null;
  return (q.num + q.den - 1n) / q.den;
}
