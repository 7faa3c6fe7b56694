// Which pod states hold a node: one definition (the core's holdsNode), the store's stored states
// derived from it, and the database's node_allocation triggers in step with it.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { holdsNode, isActiveUsed, POD_STATUSES } from "../../src/core/index.js";
import {
  CORE_POD_STATUS,
  keepsNodeName,
  PLACED_POD_STATES,
  RESOURCE_HOLDING_POD_STATES,
} from "../../src/store/domain/pod-states.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
    .filter((f) => !f.startsWith("src/store/generated"));
}

describe("pod states that hold a node", () => {
  it("are, in the core, the statuses placed on a node; pipelined ones only use what is released", () => {
    expect(POD_STATUSES.filter(holdsNode)).toEqual(["Allocated", "Binding", "Bound", "Running", "Releasing"]);
    expect(POD_STATUSES.filter(isActiveUsed)).toEqual(
      POD_STATUSES.filter((s) => holdsNode(s) || s === "Pipelined"),
    );
  });

  it("are, in the store, the stored states loaded as such a status", () => {
    expect(RESOURCE_HOLDING_POD_STATES).toEqual(["BINDING", "RUNNING", "RELEASING"]);
    for (const [state, status] of Object.entries(CORE_POD_STATUS))
      expect(RESOURCE_HOLDING_POD_STATES.includes(state as never)).toBe(holdsNode(status));
    expect(PLACED_POD_STATES).toEqual(["PIPELINED", "BINDING", "RUNNING", "RELEASING"]);
  });

  it("a pod row keeps its node name unless it goes back to PENDING", () => {
    const states = Object.keys(CORE_POD_STATUS) as (keyof typeof CORE_POD_STATUS)[];
    expect(states.filter((s) => !keepsNodeName(s))).toEqual(["PENDING"]);
  });

  it("are the states the node_allocation triggers sum (every state list of those migrations)", () => {
    const dir = path.join(ROOT, "prisma/migrations");
    const lists = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.join(dir, e.name, "migration.sql"))
      .map((f) => readFileSync(f, "utf8"))
      .filter((sql) => sql.includes("node_allocation"))
      .flatMap((sql) => [...sql.matchAll(/\bstate IN \(([^)]*)\)/g)].map((m) => m[1]!));
    expect(lists.length).toBeGreaterThan(0);
    for (const l of lists)
      expect(l.split(",").map((s) => s.trim().replace(/'/g, ""))).toEqual(RESOURCE_HOLDING_POD_STATES);
  });

  it("are defined once: no other source lists them", () => {
    const quoted = (s: string) => new RegExp(`["'](${s.toUpperCase()}|${s})["']`);
    const lists = [...sources("src"), ...sources("workers")]
      .filter((f) => !["src/core/api/status.ts", "src/store/domain/pod-states.ts"].includes(f))
      .flatMap((f) =>
        readFileSync(path.join(ROOT, f), "utf8")
          .split("\n")
          .map((line, i) => ({ f, i, line }))
          // a list, not a type of every state
          .filter(
            ({ line }) =>
              quoted("Binding").test(line) && quoted("Releasing").test(line) && !line.includes("|"),
          ),
      )
      .map(({ f, i }) => `${f}:${i + 1}`);
    expect(lists).toEqual([]);
  });
});
