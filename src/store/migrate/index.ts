export {
  migrateDeploy,
  migrateDev,
  migrateDiff,
  migrateReset,
  migrateResolve,
  migrateStatus,
} from "./commands.js";
export type { MigrateDevResult, MigrateOptions } from "./commands.js";
export { projectSchemaLocation, type SchemaLocation } from "./paths.js";
