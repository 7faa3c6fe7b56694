import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  ConfigError,
  DEFAULT_PLUGINS,
  defaultPluginRegistry,
  defaultSessionParams,
  loadSchedulerConfig,
} from "../../src/core/index.js";

describe("scheduler configuration", () => {
  it("defaults to KAI's actions and plugins", () => {
    const c = loadSchedulerConfig(null);
    expect(c.actions).toEqual(["allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"]);
    expect(c.tiers[0]!.plugins.map((p) => p.name)).toEqual(DEFAULT_PLUGINS);
  });

  it("reads KAI's YAML shape, tiers replacing the defaults", () => {
    const c = loadSchedulerConfig(
      parseYaml(
        `actions: "allocate, reclaim"\ntiers:\n  - plugins:\n      - name: proportion\n      - name: nodeplacement\n        arguments: { gpu: spread }\nsession:\n  stalenessGracePeriodSeconds: 30\n`,
      ),
    );
    expect(c.actions).toEqual(["allocate", "reclaim"]);
    expect(c.tiers[0]!.plugins).toEqual([
      { name: "proportion" },
      { name: "nodeplacement", arguments: { gpu: "spread" } },
    ]);
    expect(c.session.stalenessGracePeriodSeconds).toBe(30);
  });

  it("refuses unknown fields, actions and plugins, naming them", () => {
    expect(() => loadSchedulerConfig({ action: ["allocate"] })).toThrow(/action: unknown field/);
    expect(() => loadSchedulerConfig({ actions: ["allocate", "backfill"] })).toThrow(
      /actions\[1\]: unknown action "backfill"/,
    );
    const known = defaultPluginRegistry().names();
    expect(() => loadSchedulerConfig({ tiers: [{ plugins: [{ name: "nope" }] }] }, known)).toThrow(
      ConfigError,
    );
    expect(() => loadSchedulerConfig({ session: { stalenessGracePeriodSeconds: "soon" } })).toThrow(
      /session.stalenessGracePeriodSeconds: must be a number/,
    );
    for (const bad of [1.5, -2])
      expect(() => loadSchedulerConfig({ session: { maxScenariosPerJob: bad } })).toThrow(
        `session.maxScenariosPerJob: must be a whole number, or -1 for no limit (got ${bad})`,
      );
    expect(
      loadSchedulerConfig({ session: { maxScenariosPerAction: -1 } }).session.maxScenariosPerAction,
    ).toBe(-1);
  });

  it("bounds the victim search by default; -1 gives KAI's unbounded search", () => {
    const { session } = loadSchedulerConfig(null);
    expect([session.maxScenariosPerJob, session.maxScenariosPerAction]).toEqual([128, 1024]);
    expect(session.searchCursorIdleSeconds).toBe(300);
  });

  it("documents every session parameter with its default (docs/plugins.md)", () => {
    const doc = readFileSync(new URL("../../docs/plugins.md", import.meta.url), "utf8");
    const rows = new Map([...doc.matchAll(/^\| `(\w+)` \| `([^`]+)` \|/gm)].map((m) => [m[1], m[2]]));
    for (const [name, value] of Object.entries(defaultSessionParams()))
      expect(rows.get(name), `docs/plugins.md: session parameter ${name}`).toBe(String(value));
  });
});
