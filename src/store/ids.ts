// UUIDv7 (RFC 9562): a 48-bit millisecond timestamp, then random bits. Time-ordered ids keep the
// primary-key index append-mostly; the same kind Prisma's @default(uuid(7)) makes.
import { randomFillSync } from "node:crypto";

/** Random bytes for 256 ids, filled at once: a call of the random source per id costs more than
 * the id (a commit of 8,000 binds makes 8,000 of them). */
const pool = Buffer.allocUnsafe(16 * 256);
let taken = pool.length;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function uuidv7(now = Date.now()): string {
  if (taken === pool.length) {
    randomFillSync(pool);
    taken = 0;
  }
  const r = taken;
  taken += 16;
  const hex = (i: number) => HEX[pool[r + i]!]!;
  // 48-bit big-endian milliseconds, as two parts that bitwise operators take whole.
  const high = Math.floor(now / 2 ** 16);
  const low = now % 2 ** 16;
  const ts = `${HEX[high >>> 24]}${HEX[(high >>> 16) & 0xff]}${HEX[(high >>> 8) & 0xff]}${HEX[high & 0xff]}-${HEX[low >>> 8]}${HEX[low & 0xff]}`;
  const version = HEX[0x70 | (pool[r + 6]! & 0x0f)]! + hex(7); // version 7
  const variant = HEX[0x80 | (pool[r + 8]! & 0x3f)]! + hex(9); // variant 10
  return `${ts}-${version}-${variant}-${hex(10)}${hex(11)}${hex(12)}${hex(13)}${hex(14)}${hex(15)}`;
}
