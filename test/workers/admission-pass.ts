// One admission pass with the test defaults (default scheduler config, no usage window, no
// re-admission, chunks larger than any test's backlog).
import { pino } from "pino";
import { defaultSchedulerConfig } from "../../src/core/index.js";
import type { Store } from "../../src/store/index.js";
import { type AdmissionState, runAdmission } from "../../workers/index.js";

export const admissionPass = (store: Store, opts: { batch?: number; state?: AdmissionState } = {}) =>
  runAdmission({
    store,
    config: defaultSchedulerConfig(),
    usageWindow: null,
    readmitAfterMs: 0,
    batch: opts.batch ?? 1000,
    batchPods: 10_000,
    state: opts.state,
    log: pino({ level: "silent" }),
  });
