import path from "node:path";
import { defineConfig } from "prisma/config";

// `prisma generate|validate|format` never run the native schema engine, but the CLI first tries to
// download it and fails offline. For those three commands only, point the CLI at a stub that exits 1.
// `prisma migrate …` is left alone: online it downloads the engine as usual; offline, use
// `npm run db:migrate` (scripts/migrate.ts drives Prisma's schema engine compiled to Wasm).
const command = process.argv.slice(2).find((arg) => !arg.startsWith("-"));
if (!process.env.PRISMA_SCHEMA_ENGINE_BINARY && ["generate", "validate", "format"].includes(command ?? "")) {
  process.env.PRISMA_SCHEMA_ENGINE_BINARY = path.join(import.meta.dirname, "scripts/no-native-schema-engine");
}

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  // env("DATABASE_URL") would make even `generate` fail when unset.
  // postgresql://… = a server; pglite:<dir> = embedded PGlite (the zero-setup default).
  datasource: { url: process.env.DATABASE_URL || "pglite:./.data/pglite" },
});
