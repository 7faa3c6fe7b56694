// Quantities are shared with the control plane (which checks templates against declared resources).
export { bytes, cpuMillis, parseQuantity } from "../protocol/quantity.js";
