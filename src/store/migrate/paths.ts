import fs from "node:fs";
import path from "node:path";

/** Where the Prisma schema and migrations live. */
export interface SchemaLocation {
  /** Directory that relative `pglite:` URLs and the config resolve against. */
  root: string;
  schemaPath: string;
  migrationsDir: string;
}

/** The project's own schema: found by walking up from this file, so it works from src/ and dist/. */
export function projectSchemaLocation(): SchemaLocation {
  let dir = import.meta.dirname;
  for (;;) {
    const schemaPath = path.join(dir, "prisma", "schema.prisma");
    if (fs.existsSync(schemaPath)) {
      return { root: dir, schemaPath, migrationsDir: path.join(dir, "prisma", "migrations") };
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`prisma/schema.prisma not found above ${import.meta.dirname}`);
    dir = parent;
  }
}
