// Charts over time, drawn by uPlot (bundled with the dashboard's scripts; its stylesheet is served
// from the package at /dashboard/uplot.css): a queue's allocation, fair share and deserved share
// on one cluster, from queueShareHistory, and GPU-hours per queue (or cluster) from usageReport.
import uPlot from "uplot";
import { h, replace } from "./dom.js";
import { amount, show } from "./format.js";

export const RANGES = { day: 24 * 3600, week: 7 * 24 * 3600 };

/** from/to of the last `range` ("day" or "week"). */
export function rangeOf(range, now = Date.now()) {
  return { from: new Date(now - RANGES[range] * 1000).toISOString(), to: new Date(now).toISOString() };
}

/**
 * A line chart of `series` ([{ label, color, values, dash?, fill? }]) over `times` (epoch seconds)
 * in `el`, replacing what was drawn there; `format` writes the y axis' values. The container says
 * what it shows (data-points, data-series), for people reading the page's source and for tests.
 * `empty` is said when there is nothing to draw; `fromZero` starts the y axis at 0.
 */
export function timeChart(
  el,
  times,
  series,
  format = (v) => String(v),
  { empty = "No samples in this range yet.", fromZero = false } = {},
) {
  el.chart?.destroy();
  el.chart = null;
  el.dataset.points = String(times.length);
  el.dataset.series = series.map((s) => s.label).join(",");
  if (!times.length) return replace(el, h("p", { class: "empty" }, empty));
  replace(el);
  el.chart = new uPlot(
    {
      width: Math.max(320, el.clientWidth || 800),
      height: 240,
      scales: {
        x: { time: true },
        ...(fromZero && { y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } }),
      },
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          dash: s.dash,
          fill: s.fill,
          value: (_u, v) => (v === null || v === undefined ? "-" : format(v)),
        })),
      ],
      axes: [{}, { size: 60, values: (_u, ticks) => ticks.map((v) => format(v)) }],
    },
    [times, ...series.map((s) => s.values)],
    el,
  );
}

/** A sample's value for the resource; unlimited (-1) is no point: it has no height to draw. */
const heightOf = (resources, resource) => {
  const v = amount(resources, resource);
  return v === null || v < 0 ? null : v;
};

export function drawShareHistory(el, samples, resource) {
  const times = samples.map((s) => Date.parse(s.at) / 1000);
  const values = (key) => samples.map((s) => heightOf(s[key], resource));
  timeChart(
    el,
    times,
    [
      { label: "allocated", color: "#2f6fd0", values: values("allocated"), fill: "rgba(47, 111, 208, 0.12)" },
      { label: "fair share", color: "#d9822b", values: values("fairShare") },
      { label: "deserved", color: "#7a869a", values: values("deserved"), dash: [6, 4] },
    ],
    (v) => show(v, resource),
  );
}

const HOUR = 3600;
const DAY = 24 * HOUR;

/** The GPU-hours chart's ranges: the last day by hour, the last week or month by UTC day. */
export const USAGE_RANGES = {
  day: { seconds: DAY, step: "HOUR", unit: HOUR },
  week: { seconds: 7 * DAY, step: "DAY", unit: DAY },
  month: { seconds: 30 * DAY, step: "DAY", unit: DAY },
};

/** from/to/step of usageReport for `range`: whole periods up to the end of the current one (the
 * API takes whole UTC hours; reports by day read whole days). */
export function usageRangeOf(range, now = Date.now()) {
  const r = USAGE_RANGES[range];
  const to = (Math.floor(now / 1000 / r.unit) + 1) * r.unit;
  const iso = (s) => new Date(s * 1000).toISOString();
  return { from: iso(to - r.seconds), to: iso(to), step: r.step, unit: r.unit };
}

const PALETTE = ["#2f6fd0", "#d9822b", "#2a9d8f", "#c2414b", "#7b5ea7", "#8a6d3b", "#4f8a3b", "#b5549b"];

/** A row's group: its queue or cluster, or the fleet's total. */
const groupOf = (row) => row.queue ?? row.cluster ?? "fleet";

/**
 * usageReport's rows as one series per group (allocated GPU-hours; `used` adds each group's used
 * GPU-hours, dashed), over every period from `from` to the latest one reported: a period without
 * a row of a group held nothing of it.
 */
export function drawGpuHours(el, rows, { from, unit }, used = false) {
  const groups = [...new Set(rows.map(groupOf))].sort();
  const start = Date.parse(from) / 1000;
  const last = Math.max(start - unit, ...rows.map((r) => Date.parse(r.periodStart) / 1000));
  const times = [];
  for (let t = start; t <= last; t += unit) times.push(t);
  const at = new Map(times.map((t, i) => [t, i]));
  const values = (group, key) => {
    const out = times.map(() => 0);
    for (const r of rows) {
      const i = at.get(Date.parse(r.periodStart) / 1000);
      if (groupOf(r) === group && i !== undefined) out[i] += r[key].gpuHours;
    }
    return out;
  };
  const series = groups.flatMap((g, i) => {
    const color = PALETTE[i % PALETTE.length];
    const allocated = { label: g, color, values: values(g, "allocated") };
    return used
      ? [allocated, { label: `${g} used`, color, dash: [6, 4], values: values(g, "used") }]
      : [allocated];
  });
  timeChart(el, times, series, (v) => show(v, "gpu"), {
    empty: "No GPU-hours in this range yet.",
    fromZero: true,
  });
}
