// KAI's own action tests, converted to scenarios (../shared/conformance/kai), run in
// place — they are never copied into this repository. A ratchet: every case must pass
// unless it is listed in known-failures.json with a reason, and a listed case that
// starts passing fails the suite until it is taken off the list.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findScenarioFiles, readScenario } from "../../src/simulate/files.js";
import { runScenario } from "../../src/simulate/run.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../../shared/conformance/kai");
const known: Record<string, string> = JSON.parse(readFileSync(join(here, "known-failures.json"), "utf8"));

if (!existsSync(root)) {
  describe("KAI conformance", () => {
    it.skip(`not run: ${root} is absent on this machine`, () => {});
  });
} else {
  const files = findScenarioFiles([root]).map((f) => relative(root, f.file));

  describe("KAI conformance", () => {
    it("lists only cases that exist", () => {
      const missing = Object.keys(known).filter((k) => !files.includes(k));
      expect(missing, "known-failures.json names cases that do not exist").toEqual([]);
    });

    for (const file of files) {
      const reason = known[file];
      it(`${file}${reason ? " (known failure)" : ""}`, () => {
        const run = runScenario(readScenario(join(root, file)));
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
  });
}
