// A job's page (#job=<id>): its tasks and pods, its events as a timeline, when it is expected to
// start and why it waits, its pods' logs and a cancel button. Logs and cancelling are offered to
// those the API allows them (ADMIN, a MEMBER of the job's queue subtree); the API refuses anyone
// else all the same.
import { h, replace } from "./dom.js";
import { age, show, shortText, startsText } from "./format.js";
import { headerRow } from "./render.js";

const FINISHED = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);

export const isFinished = (job) => FINISHED.has(job.state);

/** Whether `me` may cancel the jobs of `queue` and read their logs, as the API decides: ADMIN, or
 * a MEMBER whose queue subtrees hold it (`queues`: the tree, each with its parent). */
export function mayAct(me, queue, queues) {
  if (me.role === "ADMIN") return true;
  if (me.role !== "MEMBER") return false;
  const parent = new Map(queues.map((q) => [q.name, q.parent?.name ?? null]));
  const seen = new Set();
  for (let q = queue; q && !seen.has(q); q = parent.get(q) ?? null) {
    if (me.queues.includes(q)) return true;
    seen.add(q);
  }
  return false;
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() : "-");

const table = (cls, titles, rows) =>
  h("table", { class: cls }, h("thead", {}, headerRow(titles)), h("tbody", {}, rows));

const fact = (label, value, key) =>
  h("div", { class: "fact", "data-fact": key }, h("dt", {}, label), h("dd", {}, value));

export function renderJobSummary(el, job) {
  replace(
    el,
    h(
      "dl",
      { class: "facts" },
      fact("State", h("span", { class: `state state-${job.state.toLowerCase()}` }, job.state), "state"),
      fact("Queue", job.queue.name, "queue"),
      fact(
        "Cluster",
        job.cluster?.name ?? (job.requestedCluster ? `${job.requestedCluster} (asked)` : "-"),
        "cluster",
      ),
      fact("Priority", String(job.priority), "priority"),
      fact("Gang", `${job.minMember} pods at least`, "gang"),
      fact("Attempt", String(job.attempt), "attempt"),
      fact("Submitted", `${when(job.createdAt)} (${age(job.createdAt)} ago)`, "created"),
      fact("Started", when(job.startedAt), "started"),
      fact("Finished", when(job.finishedAt), "finished"),
      job.labels.length
        ? fact("Labels", job.labels.map((l) => `${l.key}=${l.value}`).join(", "), "labels")
        : null,
    ),
  );
}

/** When it is expected to start and what stands in its way, cluster by cluster. */
export function renderJobEstimate(el, job) {
  if (job.state !== "PENDING") {
    return replace(
      el,
      h(
        "p",
        { class: "estimate" },
        job.startedAt ? `Started ${when(job.startedAt)}.` : `Not pending: ${job.state}.`,
      ),
    );
  }
  const reason = job.pendingReason;
  replace(
    el,
    h(
      "p",
      { class: "estimate", "data-estimate": job.estimatedStart ?? "unknown" },
      `Expected to start: ${startsText(job)}`,
    ),
    h("div", { class: "reason" }, reason?.message ?? "waiting for the scheduler"),
    (reason?.clusters ?? []).map((c) =>
      h(
        "div",
        { class: "short", "data-cluster": c.cluster },
        `${c.cluster}: ${c.message}${c.short.length ? ` — short of ${c.short.map(shortText).join(", ")}` : ""}`,
      ),
    ),
  );
}

const gpusOf = (pod) => {
  const n = show(pod.resources.gpu ?? 0, "gpu");
  if (pod.gpuDevices.length) return `${n} (devices ${pod.gpuDevices.join(", ")})`;
  return pod.gpuGroups.length ? `${n} (${pod.gpuGroups.join(", ")})` : n;
};

export function renderJobPods(el, job) {
  const tasks = table(
    "tasks",
    ["Task", "Replicas>", "GPUs per pod>"],
    job.tasks.map((t) =>
      h(
        "tr",
        { "data-task": t.name },
        h("td", {}, t.name),
        h("td", { class: "num" }, String(t.replicas)),
        h("td", { class: "num" }, show(t.resources.gpu ?? 0, "gpu")),
      ),
    ),
  );
  const pods = job.pods.length
    ? table(
        "pods",
        ["Pod", "Task", "State", "Node", "GPUs", "Started", "Finished", "Note"],
        job.pods.map((p) =>
          h(
            "tr",
            { "data-pod": p.name },
            h("td", {}, p.name),
            h("td", {}, p.task),
            h("td", { class: "pod-state" }, p.state),
            h("td", { class: "pod-node" }, p.node ?? "-"),
            h("td", {}, gpusOf(p)),
            h("td", {}, when(p.startedAt)),
            h("td", {}, when(p.finishedAt)),
            h(
              "td",
              {},
              [p.message, p.exitCode === null ? null : `exit code ${p.exitCode}`].filter(Boolean).join("; "),
            ),
          ),
        ),
      )
    : h("p", { class: "empty" }, "No pods yet.");
  replace(el, h("h3", {}, "Tasks"), tasks, h("h3", {}, "Pods"), pods);
}

/** Its events, oldest first, along a line. */
export function renderJobTimeline(el, events) {
  if (!events.length) return replace(el, h("li", { class: "empty" }, "No events."));
  replace(
    el,
    events.map((e) =>
      h(
        "li",
        { "data-kind": e.kind },
        h("time", { datetime: e.at }, when(e.at)),
        h("span", { class: "kind" }, e.kind),
        h("span", { class: "message" }, e.message),
        e.actor ? h("span", { class: "actor" }, `by ${e.actor}`) : null,
      ),
    ),
  );
}

/** The pod picker and the log's view; `show(pod)` resolves to the log's text. Drawn again only
 * when the job's pods change, so that a log being read stays. */
export function renderJobLogs(el, job, allowed, showLog) {
  const key = `${job.id}\u0000${allowed}\u0000${job.pods.map((p) => p.name).join("\u0000")}`;
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  if (!allowed) {
    return replace(
      el,
      h("p", { class: "empty" }, "Logs are shown to ADMIN tokens and to MEMBERs of the job's queue."),
    );
  }
  if (!job.pods.length) return replace(el, h("p", { class: "empty" }, "No pods yet."));
  const picker = h(
    "select",
    { "data-testid": "log-pod", "aria-label": "Pod" },
    job.pods.map((p) => h("option", { value: p.name }, p.name)),
  );
  const output = h("pre", { class: "log", "data-testid": "log-text" });
  const error = h("p", { class: "error" });
  let asked = 0;
  const load = async () => {
    // Only the latest pick's answer is shown: an earlier one may arrive after it.
    const mine = ++asked;
    const pod = picker.value;
    error.textContent = "";
    output.textContent = "loading…";
    try {
      const text = await showLog(pod);
      if (mine !== asked) return;
      output.textContent = text || "(the log is empty)";
      output.dataset.pod = pod;
    } catch (e) {
      if (mine !== asked) return;
      output.textContent = "";
      error.textContent = e.message;
    }
  };
  const button = h("button", { type: "button", "data-testid": "log-show" }, "Show log");
  button.addEventListener("click", load);
  picker.addEventListener("change", load);
  replace(el, h("div", { class: "log-controls" }, h("label", {}, "Pod ", picker), button), error, output);
}
