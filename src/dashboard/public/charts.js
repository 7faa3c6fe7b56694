// Charts over time, drawn by uPlot (bundled with the dashboard's scripts; its stylesheet is served
// from the package at /dashboard/uplot.css): a queue's allocation, fair share and deserved share
// on one cluster, from queueShareHistory.
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
 */
export function timeChart(el, times, series, format = (v) => String(v)) {
  el.chart?.destroy();
  el.chart = null;
  el.dataset.points = String(times.length);
  el.dataset.series = series.map((s) => s.label).join(",");
  if (!times.length) return replace(el, h("p", { class: "empty" }, "No samples in this range yet."));
  replace(el);
  el.chart = new uPlot(
    {
      width: Math.max(320, el.clientWidth || 800),
      height: 240,
      scales: { x: { time: true } },
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
