// For tests and benchmarks only: the Prisma client behind a Store or a Database, for setting up
// or reading back what the index's operations and queries do not. Product code (src/, workers/,
// bin/, scripts/) may not import this module (test/layers.test.ts).
export { prismaOf } from "./client.js";
