export * from "./spec.js";
export * from "./result.js";
export * from "./resources.js";
export * from "./status.js";
export * from "./pod-info.js";
export * from "./podgroup-info.js";
export * from "./node-info.js";
export * from "./queue-info.js";
