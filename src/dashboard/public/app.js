// The dashboard: signs in with the identity provider (sign-in.js; tokens in sessionStorage) or a
// static token (#token= or the form, kept in localStorage), loads the queue tree, fair share,
// clusters and jobs — or, at #job=<id>, that job's page (job-page.js) — and reloads whenever the
// queueEvents subscription reports a change (debounced), polling as a fallback while the
// WebSocket is down. The fair-share chart (charts.js) reloads when its choices change and each
// minute, as often as the workers sample; the GPU-hours chart when its choices change and every
// five minutes (usage is rolled up per hour).
import {
  CANCEL_JOB,
  DASHBOARD_QUERY,
  gql,
  JOB_EVENTS_QUERY,
  JOB_QUERY,
  ME_QUERY,
  PENDING_QUERY,
  POD_LOGS_QUERY,
  RUNNING_QUERY,
  SHARE_HISTORY_QUERY,
  SHORTFALL_QUERY,
  RateLimited,
  USAGE_QUERY,
  subscribeEvents,
  Unauthenticated,
} from "./api.js";
import { drawGpuHours, drawShareHistory, rangeOf, usageRangeOf } from "./charts.js";
import { h, replace } from "./dom.js";
import {
  isFinished,
  mayAct,
  renderJobEstimate,
  renderJobLogs,
  renderJobPods,
  renderJobSummary,
  renderJobTimeline,
} from "./job-page.js";
import { renderClusters, renderEvents, renderPending, renderQueues, renderRunning } from "./render.js";
import { accessToken, beginSignIn, finishSignIn, forgetSignIn, signedIn, signInConfig } from "./sign-in.js";

const STORAGE_KEY = "fleetq.token";
const $ = (id) => document.getElementById(id);

const state = {
  /** A static token; null when signed in with the identity provider. */
  token: null,
  /** The API's sign-in configuration while signed in with the identity provider. */
  oidc: null,
  /** A refused access token was renewed since the last successful load. */
  renewed: false,
  resource: "gpu",
  data: null,
  /** The job whose page is shown (#job=<id>); null: the queues and jobs. */
  jobId: null,
  /** { job, events } of that page. */
  jobData: null,
  /** The signed-in principal and the queue tree (who may cancel and read logs). */
  me: null,
  queues: [],
  historyTimer: null,
  /** The chart's samples, drawn again when the resource changes. */
  history: null,
  /** Counts the chart's loads. */
  historyAsked: 0,
  usageTimer: null,
  /** The role the GPU-hours chart's choices were offered for. */
  usageRole: null,
  /** The GPU-hours chart's rows and range, drawn again when "used too" changes. */
  usage: null,
  /** Counts the GPU-hours chart's loads. */
  usageAsked: 0,
  events: [],
  live: false,
  unsubscribe: null,
  pollTimer: null,
  refreshTimer: null,
  loading: null,
  /** Date.now() before which no load is sent: the token's budget is spent. */
  limitedUntil: 0,
};

function setStatus(text, kind) {
  const el = $("status");
  el.textContent = text;
  el.className = `status ${kind}`;
}

function showLogin(message = "") {
  $("login").hidden = false;
  $("content").hidden = true;
  $("job-page").hidden = true;
  $("logout").hidden = true;
  $("login-error").textContent = message;
  setStatus("signed out", "offline");
}

function draw() {
  const d = state.data;
  if (!d) return;
  $("who").textContent = `${d.me.name} (${d.me.role})`;
  fillHistoryChoices(d);
  fillUsageChoices(d.me.role);
  renderQueues($("queues"), d, state.resource);
  renderClusters($("clusters"), d.clusters);
  renderPending($("pending"), d.pending);
  renderRunning($("running"), d.running);
  renderEvents($("events"), state.events);
}

/** Pending jobs with each cluster's shortfall (fetched apart) merged into their reasons. */
function withShortfalls(pending, shortfalls) {
  const short = new Map();
  for (const j of shortfalls) {
    for (const c of j.pendingReason?.clusters ?? []) short.set(`${j.id}\u0000${c.cluster}`, c.short);
  }
  return pending.map((j) => {
    if (!j.pendingReason) return j;
    const clusters = j.pendingReason.clusters.map((c) => ({
      ...c,
      short: short.get(`${j.id}\u0000${c.cluster}`) ?? [],
    }));
    return { ...j, pendingReason: { ...j.pendingReason, clusters } };
  });
}

/** The bearer token: the static one, else the provider's access token, refreshed when due (or
 * `force`d after a refusal). */
async function currentToken(force = false) {
  if (!state.oidc) return state.token;
  const token = await accessToken(state.oidc, force);
  if (!token) throw new Unauthenticated("The sign-in has expired.");
  return token;
}

async function load() {
  const token = await currentToken();
  if (state.jobId) return loadJob(token, state.jobId);
  const [a, p, s, r] = await Promise.all(
    [DASHBOARD_QUERY, PENDING_QUERY, SHORTFALL_QUERY, RUNNING_QUERY].map((q) => gql(token, q)),
  );
  const nodes = (connection) => connection.edges.map((e) => e.node);
  state.data = {
    ...a,
    pending: withShortfalls(nodes(p.pending), nodes(s.shortfalls)),
    running: nodes(r.running),
  };
  state.me = a.me;
  state.queues = a.queues;
  document.body.dataset.loadedAt = String(Date.now());
  draw();
}

// The job page.

async function loadJob(token, id) {
  const [me, j, e] = await Promise.all([
    gql(token, ME_QUERY),
    gql(token, JOB_QUERY, { id }),
    gql(token, JOB_EVENTS_QUERY, { id }),
  ]);
  if (id !== state.jobId) return; // left meanwhile
  state.me = me.me;
  state.queues = me.queues;
  state.jobData = j.job ? { job: j.job, events: e.job?.events ?? [] } : null;
  $("who").textContent = `${me.me.name} (${me.me.role})`;
  document.body.dataset.loadedAt = String(Date.now());
  drawJob();
}

function drawJob() {
  $("job-id").textContent = state.jobId ?? "";
  const data = state.jobData;
  $("job-error").textContent = data ? "" : `No job ${state.jobId}.`;
  for (const id of ["job-summary", "job-estimate", "job-pods", "job-timeline", "job-logs"])
    $(id).hidden = !data;
  if (!data) return;
  const { job, events } = data;
  const allowed = mayAct(state.me, job.queue.name, state.queues);
  $("job-title").textContent = job.name;
  renderJobSummary($("job-summary"), job);
  renderJobEstimate($("job-estimate"), job);
  renderJobPods($("job-pods"), job);
  renderJobTimeline($("job-timeline"), events);
  renderJobLogs(
    $("job-logs"),
    job,
    allowed,
    async (pod) => (await gql(await currentToken(), POD_LOGS_QUERY, { job: job.id, pod })).podLogs,
  );
  const cancel = $("job-cancel");
  cancel.hidden = !allowed;
  cancel.disabled = !allowed || isFinished(job);
}

async function cancelShownJob() {
  const job = state.jobData?.job;
  if (!job || !confirm(`Cancel job ${job.name}?`)) return;
  $("job-cancel-error").textContent = "";
  try {
    await gql(await currentToken(), CANCEL_JOB, { id: job.id });
  } catch (e) {
    $("job-cancel-error").textContent = e.message;
  }
  refresh();
}

/** #job=<id> shows that job's page; anything else the queues and jobs. */
function route() {
  const id = new URLSearchParams(location.hash.slice(1)).get("job");
  if ((id || null) === state.jobId) return;
  state.jobId = id || null;
  state.jobData = null;
  $("job-logs").dataset.key = "";
  if (!state.token && !state.oidc) return;
  $("job-page").hidden = !state.jobId;
  $("content").hidden = Boolean(state.jobId);
  if (state.jobId) replace($("job-summary"), h("p", { class: "empty" }, "loading…"));
  refresh();
}

// The fair-share chart.

/** Options of a select, keeping the choice when it is still offered. */
function fillSelect(select, names) {
  const chosen = select.value;
  if ([...select.options].map((o) => o.value).join("\u0000") !== names.join("\u0000")) {
    replace(
      select,
      names.map((n) => h("option", { value: n }, n)),
    );
  }
  if (names.includes(chosen)) select.value = chosen;
}

function fillHistoryChoices(d) {
  const before = `${$("history-queue").value}\u0000${$("history-cluster").value}`;
  fillSelect($("history-queue"), d.queues.map((q) => q.name).sort());
  fillSelect(
    $("history-cluster"),
    d.clusters.map((c) => c.name),
  );
  if (`${$("history-queue").value}\u0000${$("history-cluster").value}` !== before) loadHistory();
}

async function loadHistory() {
  clearTimeout(state.historyTimer);
  state.historyTimer = setTimeout(loadHistory, 60_000);
  const queue = $("history-queue").value;
  const cluster = $("history-cluster").value;
  if (!queue || !cluster || state.jobId || !(state.token || state.oidc)) return;
  // Only the latest choice's answer is drawn: an earlier one may arrive after it.
  const asked = ++state.historyAsked;
  try {
    const range = rangeOf($("history-range").value);
    const d = await gql(await currentToken(), SHARE_HISTORY_QUERY, { queue, cluster, ...range });
    if (asked !== state.historyAsked) return;
    $("history-error").textContent = "";
    state.history = d.queueShareHistory;
    drawShareHistory($("share-history"), state.history, state.resource);
  } catch (e) {
    if (asked === state.historyAsked) $("history-error").textContent = e.message;
  }
}

// The GPU-hours chart.

/** A VIEWER sees fleet totals only (per cluster at most): no per-queue choice. */
function fillUsageChoices(role) {
  if (role === state.usageRole) return;
  state.usageRole = role;
  const by = $("gpu-hours-by");
  const perQueue = by.querySelector('option[value="QUEUE"]');
  perQueue.disabled = role === "VIEWER";
  if (perQueue.disabled && by.value === "QUEUE") by.value = "CLUSTER";
  $("gpu-hours").hidden = false;
  loadUsage();
}

async function loadUsage() {
  clearTimeout(state.usageTimer);
  state.usageTimer = setTimeout(loadUsage, 5 * 60_000);
  if (!state.usageRole || state.jobId || !(state.token || state.oidc)) return;
  // Only the latest choice's answer is drawn: an earlier one may arrive after it.
  const asked = ++state.usageAsked;
  const by = $("gpu-hours-by").value;
  const range = usageRangeOf($("gpu-hours-range").value);
  const groupBy = by === "TOTAL" ? [] : [by];
  try {
    const { from, to, step } = range;
    const d = await gql(await currentToken(), USAGE_QUERY, { from, to, groupBy, step });
    if (asked !== state.usageAsked) return;
    $("gpu-hours-error").textContent = "";
    state.usage = { rows: d.usageReport, range };
    drawUsage();
  } catch (e) {
    if (asked !== state.usageAsked) return;
    $("gpu-hours-error").textContent = e.message;
    // The token's budget is spent (by the page's other loads): again once it is refilled.
    if (e instanceof RateLimited) {
      clearTimeout(state.usageTimer);
      state.usageTimer = setTimeout(loadUsage, e.retryAfter * 1000);
    }
  }
}

function drawUsage() {
  if (state.usage)
    drawGpuHours($("gpu-hours-chart"), state.usage.rows, state.usage.range, $("gpu-hours-used").checked);
}

/** One load at a time; a request while one runs makes one more afterwards. While the token's
 * budget is spent (RATE_LIMITED), loads wait until the API says it is refilled. */
function refresh() {
  if (state.loading) {
    state.loading.again = true;
    return;
  }
  const wait = (state.limitedUntil ?? 0) - Date.now();
  if (wait > 0) {
    clearTimeout(state.refreshTimer);
    state.refreshTimer = setTimeout(refresh, wait);
    return;
  }
  const run = { again: false };
  state.loading = run;
  load()
    .then(() => {
      state.renewed = false;
      if (!state.limitedUntil) return;
      state.limitedUntil = 0;
      setStatus(state.live ? "live" : "reconnecting (polling)", state.live ? "live" : "polling");
    })
    .catch(async (e) => {
      if (e instanceof Unauthenticated && state.oidc && !state.renewed) {
        // Refused: a new access token, then one more try (once until a load succeeds).
        state.renewed = true;
        run.again = await currentToken(true).then(Boolean, () => false);
        if (run.again) return;
      }
      if (e instanceof Unauthenticated) return signOut("The token was refused; sign in again.");
      if (e instanceof RateLimited) {
        state.limitedUntil = Date.now() + e.retryAfter * 1000;
        run.again = true;
        return setStatus(`rate limited: next refresh in ${e.retryAfter} s`, "polling");
      }
      if (state.jobId) $("job-error").textContent = e.message;
      setStatus(`error: ${e.message}`, "offline");
    })
    .finally(() => {
      state.loading = null;
      if (run.again) refresh();
    });
}

function schedulePoll() {
  clearTimeout(state.pollTimer);
  state.pollTimer = setTimeout(
    () => {
      refresh();
      schedulePoll();
    },
    state.live ? 15000 : 3000,
  );
}

/** Signed in: a static token, or (`oidc`, the API's sign-in configuration) the provider's tokens. */
function start(token, oidc = null) {
  state.token = token;
  state.oidc = oidc;
  $("login").hidden = true;
  state.jobId = new URLSearchParams(location.hash.slice(1)).get("job") || null;
  $("content").hidden = Boolean(state.jobId);
  $("job-page").hidden = !state.jobId;
  $("logout").hidden = false;
  setStatus("connecting", "polling");
  refresh();
  schedulePoll();
  state.unsubscribe = subscribeEvents(
    () => currentToken(),
    (event) => {
      state.events = [event, ...state.events].slice(0, 30);
      renderEvents($("events"), state.events);
      clearTimeout(state.refreshTimer);
      state.refreshTimer = setTimeout(refresh, 300);
    },
    (status) => {
      state.live = status === "live";
      setStatus(state.live ? "live" : "reconnecting (polling)", state.live ? "live" : "polling");
      if (state.live) refresh();
      schedulePoll();
    },
  );
}

function signOut(message) {
  localStorage.removeItem(STORAGE_KEY);
  forgetSignIn();
  state.oidc = null;
  state.unsubscribe?.();
  state.unsubscribe = null;
  clearTimeout(state.pollTimer);
  clearTimeout(state.historyTimer);
  state.historyTimer = null;
  clearTimeout(state.usageTimer);
  state.usageTimer = null;
  state.usageRole = null;
  state.usage = null;
  state.token = null;
  state.data = null;
  state.jobData = null;
  showLogin(message);
}

$("login-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const token = $("token").value.trim();
  if (!token) return;
  localStorage.setItem(STORAGE_KEY, token);
  start(token);
});
$("logout").addEventListener("click", () => signOut(""));
$("resource").addEventListener("change", (e) => {
  state.resource = e.target.value;
  draw();
  if (state.history) drawShareHistory($("share-history"), state.history, state.resource);
});
for (const id of ["history-queue", "history-cluster", "history-range"])
  $(id).addEventListener("change", () => loadHistory());
for (const id of ["gpu-hours-by", "gpu-hours-range"]) $(id).addEventListener("change", () => loadUsage());
$("gpu-hours-used").addEventListener("change", () => drawUsage());
$("job-cancel").addEventListener("click", () => cancelShownJob());
window.addEventListener("hashchange", route);

// #token=… signs in and is then removed from the address bar (and so from the history). In the
// fragment, it never reaches a server, a proxy's log or a Referer header.
function tokenFromFragment() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (!fragment.get("token")) return false;
  localStorage.setItem(STORAGE_KEY, fragment.get("token"));
  fragment.delete("token");
  history.replaceState(
    null,
    "",
    `${location.pathname}${location.search}${fragment.size ? `#${fragment}` : ""}`,
  );
  return true;
}

/** The provider's sign-in when the API offers one: its button, and the return from it. A token
 * link (#token=) wins over an earlier sign-in of this tab. */
async function boot() {
  const linked = tokenFromFragment();
  const oidc = await signInConfig();
  if (oidc) {
    $("sso").hidden = false;
    $("sso-button").addEventListener("click", () => beginSignIn(oidc).catch((e) => showLogin(e.message)));
  }
  try {
    const returned = await finishSignIn(oidc);
    if (returned || (!linked && oidc && signedIn())) return start(null, oidc);
  } catch (e) {
    return showLogin(e.message);
  }
  const saved = localStorage.getItem(STORAGE_KEY);
  if (saved) start(saved);
  else showLogin();
}

boot();
