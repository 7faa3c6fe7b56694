// A folder of a test's own under the system's temporary folder, removed when the test file is
// done (called while the file is collected) or when the test is (called inside one).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, onTestFinished } from "vitest";

export function tempDir(label: string, until: "file" | "test" = "file"): string {
  const dir = mkdtempSync(path.join(tmpdir(), `${label}-`));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  if (until === "test") onTestFinished(remove);
  else afterAll(remove);
  return dir;
}
