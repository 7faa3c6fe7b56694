// snapshot: in KAI, serves the session's snapshot over HTTP for debugging. The core
// does no I/O (the snapshot is already plain data in the caller's hands), so the
// plugin registers nothing; it is accepted so that KAI configurations load unchanged.
import type { Plugin } from "../../framework/session.js";

export const name = "snapshot";

export function create(): Plugin {
  return { name, onSessionOpen() {} };
}
