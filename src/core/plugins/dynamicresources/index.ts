// dynamicresources: Kubernetes dynamic resource allocation (DRA) claims. fleetq's pods
// carry no DRA claims, so the plugin registers nothing; it is accepted so that KAI
// configurations load unchanged.
import type { Plugin } from "../../framework/session.js";

export const name = "dynamicresources";

export function create(): Plugin {
  return { name, onSessionOpen() {} };
}
