// Runs the API server from the environment (what `fleetq serve` does):
//   DATABASE_URL (default: embedded PGlite in ./.data/pglite), REDIS_URL, FLEETQ_PORT (4000),
//   FLEETQ_HOST, FLEETQ_ADMIN_TOKEN, FLEETQ_REDIS_PREFIX ("fleetq:").
// Apply migrations first (npm run db:migrate).
import { createApiServer } from "./server.js";

const server = await createApiServer({
  redisPrefix: process.env.FLEETQ_REDIS_PREFIX,
  host: process.env.FLEETQ_HOST,
});
console.log(`fleetq api listening on ${server.url}`);

const stop = async () => {
  await server.close();
  process.exit(0);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
