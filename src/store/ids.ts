// UUIDv7 (RFC 9562): a 48-bit millisecond timestamp, then random bits. Time-ordered ids keep the
// primary-key index append-mostly; the same kind Prisma's @default(uuid(7)) makes.
import { randomBytes } from "node:crypto";

export function uuidv7(now = Date.now()): string {
  const b = randomBytes(16);
  b.writeUIntBE(now, 0, 6);
  b[6] = 0x70 | (b[6]! & 0x0f); // version 7
  b[8] = 0x80 | (b[8]! & 0x3f); // variant 10
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
