// The order test files start in: the files that run a whole system (a topology under faults, the
// development server, the production image's replay) take minutes each, mostly waiting; started
// first, they wait beside the many short files instead of after them. The rest keep vitest's
// order (the longest of the last run first, else the largest file first).
import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const SYSTEMS = ["test/faults/", "test/e2e/", "test/deploy/"];

const startsSystem = (spec: TestSpecification) => {
  const file = path.relative(spec.project.config.root, spec.moduleId).split(path.sep).join("/");
  return SYSTEMS.some((dir) => file.startsWith(dir));
};

export default class SystemsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter(startsSystem), ...sorted.filter((f) => !startsSystem(f))];
  }
}
