// The metric names a dashboard or an alerting rule asks Prometheus for, and the series names a
// /metrics page serves. PromQL is read just far enough for that: strings, label matchers and
// ranges taken out, grouping clauses and calls told apart from selectors; brackets must balance
// and every call must name a PromQL function, so a misspelt expression is an error too.
import { parseAllDocuments } from "yaml";

// biome-ignore format: a list of names
const FUNCTIONS = new Set([
  // aggregations
  "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk",
  "topk", "quantile", "limitk", "limit_ratio",
  // functions
  "abs", "absent", "absent_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min",
  "day_of_month", "day_of_week", "day_of_year", "days_in_month", "delta", "deriv", "exp", "floor",
  "histogram_avg", "histogram_count", "histogram_fraction", "histogram_quantile", "histogram_sum",
  "holt_winters", "hour", "idelta", "increase", "irate", "label_join", "label_replace", "ln",
  "log2", "log10", "minute", "month", "predict_linear", "rate", "resets", "round", "scalar", "sgn",
  "sort", "sort_desc", "sqrt", "time", "timestamp", "vector", "year", "avg_over_time",
  "min_over_time", "max_over_time", "sum_over_time", "count_over_time", "quantile_over_time",
  "stddev_over_time", "stdvar_over_time", "last_over_time", "present_over_time",
]);

const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "inf", "nan", "atan2"]);
const GROUPING = /\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)/g;
const BARE_GROUPING = /\b(group_left|group_right)\b/g;

/** Grafana's variables as a value PromQL accepts where they stand (a range, a label value). */
export function expandGrafanaVariables(expr: string): string {
  return expr.replace(/\$__(rate_)?interval|\$__range/g, "5m").replace(/\$\{?\w+(:\w+)?\}?/g, "x");
}

function balanced(expr: string): void {
  const open = "([{";
  const close = ")]}";
  const stack: string[] = [];
  for (const c of expr) {
    if (open.includes(c)) stack.push(close[open.indexOf(c)]!);
    else if (close.includes(c) && stack.pop() !== c) throw new Error(`unbalanced ${c} in: ${expr}`);
  }
  if (stack.length) throw new Error(`unclosed ${stack.join("")} in: ${expr}`);
}

/** The metric names an expression selects; throws on an expression that is not PromQL. */
export function metricNames(expr: string): string[] {
  const plain = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  balanced(plain);
  const bare = plain
    .replace(/\{[^{}]*\}/g, "")
    .replace(/\[[^[\]]*\]/g, "")
    .replace(GROUPING, "")
    .replace(BARE_GROUPING, "");
  const names = new Set<string>();
  for (const m of bare.matchAll(/(?<![\w.:])[a-zA-Z_:][\w:]*/g)) {
    const word = m[0];
    const call = /^\s*\(/.test(bare.slice(m.index + word.length));
    if (call) {
      if (!FUNCTIONS.has(word)) throw new Error(`unknown function ${word} in: ${expr}`);
    } else if (!KEYWORDS.has(word.toLowerCase())) {
      names.add(word);
    }
  }
  return [...names];
}

export interface Expression {
  /** Where it is: a file and a panel, variable or rule. */
  where: string;
  expr: string;
}

// biome-ignore lint/suspicious/noExplicitAny: free-form dashboard JSON, walked by shape
type Json = any;

/** Every query of a Grafana dashboard: its panels' targets (rows' panels included) and its
 * variables' `label_values(metric, label)`, the latter as the metric's selector. */
export function dashboardExpressions(file: string, dashboard: Json): Expression[] {
  const out: Expression[] = [];
  const panels = (list: Json[] = []): void => {
    for (const p of list) {
      for (const t of p.targets ?? []) {
        if (t.expr) out.push({ where: `${file}: panel "${p.title}"`, expr: expandGrafanaVariables(t.expr) });
      }
      panels(p.panels);
    }
  };
  panels(dashboard.panels);
  for (const v of dashboard.templating?.list ?? []) {
    if (v.type !== "query") continue;
    const query: string = typeof v.query === "string" ? v.query : v.query.query;
    const labelValues = /^label_values\((.+),\s*\w+\)$/.exec(query.trim());
    out.push({
      where: `${file}: variable ${v.name}`,
      expr: expandGrafanaVariables(labelValues ? labelValues[1]! : query),
    });
  }
  return out;
}

/** Every `expr` of a PrometheusRule's groups. */
export function ruleExpressions(file: string, yamlText: string): Expression[] {
  return parseAllDocuments(yamlText).flatMap((doc) =>
    ((doc.toJS() as Json)?.spec?.groups ?? []).flatMap((g: Json) =>
      g.rules.map((r: Json) => ({ where: `${file}: ${r.alert ?? r.record}`, expr: String(r.expr) })),
    ),
  );
}

const SERIES: Record<string, string[]> = {
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"],
};

/** The series names a /metrics page serves, from its `# TYPE` lines: a histogram's are its
 * `_bucket`, `_sum` and `_count`; a family without samples yet counts as served. */
export function servedSeries(exposition: string): Set<string> {
  const out = new Set<string>();
  for (const m of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    for (const suffix of SERIES[m[2]!] ?? [""]) out.add(m[1]! + suffix);
  }
  return out;
}

/** The expressions' metric names that no page serves: "name (where)". */
export function unserved(expressions: readonly Expression[], served: ReadonlySet<string>): string[] {
  return expressions.flatMap((e) =>
    metricNames(e.expr)
      .filter((n) => !served.has(n))
      .map((n) => `${n} (${e.where})`),
  );
}
