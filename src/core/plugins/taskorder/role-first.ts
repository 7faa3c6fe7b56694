import type { PodInfo } from "../../api/pod-info.js";

/** Pods whose `label` equals `value` go first. */
export function roleFirst(label: string, value: string): (l: PodInfo, r: PodInfo) => number {
  return (l, r) => {
    const lm = l.spec.labels[label] === value;
    const rm = r.spec.labels[label] === value;
    return lm === rm ? 0 : lm ? -1 : 1;
  };
}
