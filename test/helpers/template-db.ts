// One migrated database per test run, cloned for every test database (CREATE DATABASE … TEMPLATE
// copies its files): applying every migration again per test file costs far more than the copy.
// The run's global setup creates it and names it in FLEETQ_TEST_TEMPLATE_DB for the test
// processes; outside a run (a benchmark) each database is migrated as before.
import { migrateDeploy } from "../../src/store/migrate/index.js";
import { admin, reserveTestDatabase, TEMPLATE_ENV } from "./db.js";

export default async function setup(): Promise<() => Promise<void>> {
  const db = reserveTestDatabase();
  await admin((c) => c.query(`CREATE DATABASE "${db.name}"`));
  await migrateDeploy({ url: db.url });
  // Marked a template: a stray connection to it could not block the copies.
  await admin((c) => c.query(`ALTER DATABASE "${db.name}" WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`));
  process.env[TEMPLATE_ENV] = db.name;
  return async () => {
    await admin((c) => c.query(`ALTER DATABASE "${db.name}" WITH IS_TEMPLATE false`));
    await db.drop();
  };
}
