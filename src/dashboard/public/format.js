// Quantities as people read them: gpu devices, cpu cores (the API sends millicores), memory
// in Gi/Ti (the API sends bytes as a string). -1 = unlimited.
const UNITS = ["", "Ki", "Mi", "Gi", "Ti", "Pi"];

const trim = (n, digits = 1) => {
  const s = n.toFixed(digits);
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
};

/** The value of a Resources object for the chosen resource, in display units (cores, bytes, devices). */
export function amount(resources, resource) {
  if (!resources) return null;
  const v = resources[resource];
  if (v === null || v === undefined) return null;
  const n = Number(v);
  if (n < 0) return -1;
  return resource === "cpu" ? n / 1000 : n;
}

export function show(value, resource) {
  if (value === null || value === undefined) return "-";
  if (value < 0) return "∞";
  if (resource === "memory") {
    let v = value;
    let u = 0;
    while (v >= 1024 && u < UNITS.length - 1) {
      v /= 1024;
      u++;
    }
    return `${trim(v)}${UNITS[u]}`;
  }
  return trim(value, resource === "gpu" ? 2 : 1);
}

export function age(iso) {
  if (!iso) return "-";
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d`;
}

/** A pending job's estimated start: "in 12m on c1", "now on c1", or "unknown". */
export function startsText(job) {
  if (!job.estimatedStart) return "unknown";
  const s = Math.round((Date.parse(job.estimatedStart) - Date.now()) / 1000);
  const where = job.estimatedCluster ? ` on ${job.estimatedCluster}` : "";
  if (s <= 0) return `now${where}`;
  return `in ${age(new Date(Date.now() - s * 1000).toISOString())}${where}`;
}

export function shortText(s) {
  if (s.resource === "GPU") return `${trim(s.amount, 2)} GPU`;
  if (s.resource === "CPU") return `${trim(s.amount / 1000)} CPU`;
  return `${show(s.amount, "memory")} memory`;
}
