// KAI's own action tests, converted to scenarios (../shared/conformance/kai), run in
// place — they are never copied into this repository. A ratchet: every case must pass
// unless it is listed in known-failures.json with a reason, and a listed case that
// starts passing fails the suite until it is taken off the list. Each case runs twice:
// with fleetq's defaults (victim searches bounded per cycle) and with KAI's own
// unbounded search, and must give the same verdict both ways. Each case's session is also run
// again with the jobs and nodes the first one left untouched carried over (SessionCarry): it
// must decide exactly the same.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findScenarioFiles, readScenario } from "../../src/simulate/files.js";
import { runScenario } from "../../src/simulate/run.js";
import { scenarioConfig, scenarioSnapshot } from "../../src/simulate/to-snapshot.js";
import { SessionCarry, runSession } from "../../src/core/index.js";
import type { Scenario } from "../../src/simulate/scenario.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../../shared/conformance/kai");
const known: Record<string, string> = JSON.parse(readFileSync(join(here, "known-failures.json"), "utf8"));

/** The scenario with KAI's unbounded victim search, unless it sets a budget itself. */
function unbounded(s: Scenario): Scenario {
  const session = { maxScenariosPerJob: -1, maxScenariosPerAction: -1, ...s.config?.session };
  return { ...s, config: { ...s.config, session } };
}

if (!existsSync(root)) {
  describe("KAI conformance", () => {
    it.skip(`not run: ${root} is absent`, () => {});
  });
} else {
  const files = findScenarioFiles([root]).map((f) => relative(root, f.file));

  describe("KAI conformance", () => {
    it("lists only cases that exist", () => {
      const missing = Object.keys(known).filter((k) => !files.includes(k));
      expect(missing, "known-failures.json names cases that do not exist").toEqual([]);
    });

    for (const file of files)
      for (const search of ["bounded", "unbounded"] as const) {
        const reason = known[file];
        it(`${file} (${search} search)${reason ? " (known failure)" : ""}`, () => {
          const scenario = readScenario(join(root, file));
          const run = runScenario(search === "unbounded" ? unbounded(scenario) : scenario);
          const failures = run.check?.failures ?? [];
          if (reason) {
            expect(
              failures.length,
              `${file} now passes: remove it from known-failures.json (${reason})`,
            ).toBeGreaterThan(0);
          } else {
            expect(failures, `${file} fails`).toEqual([]);
          }
        });
      }

    for (const file of files)
      it(`${file} (carried)`, () => {
        const scenario = readScenario(join(root, file));
        const snapshot = scenarioSnapshot(scenario);
        const cfg = scenarioConfig(scenario);
        const carry = new SessionCarry();
        const first = runSession(snapshot, cfg, { carry });
        expect(runSession(snapshot, cfg, { carry })).toEqual(first);
      });
  });
}
