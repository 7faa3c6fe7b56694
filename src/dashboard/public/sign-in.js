// Sign-in with the identity provider the API names (GET /auth/config): the authorization code
// flow with PKCE (S256), state and nonce. The API exchanges the code and refreshes the tokens on
// the page's behalf (POST /auth/token, /auth/refresh; it checks the nonce), so that the page
// talks to its own server only. Tokens live in sessionStorage: gone with the tab.

const PENDING_KEY = "fleetq.signin";
const TOKENS_KEY = "fleetq.session";
/** Refreshed this long before expiry, so that no request carries a token about to lapse. */
const REFRESH_MARGIN_MS = 60_000;

/** Where the provider sends the person back: the dashboard itself. */
const redirectUri = () => `${location.origin}/`;

const base64url = (bytes) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

async function challengeOf(verifier) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

/** The API's sign-in configuration, or null when it takes static tokens only. */
export async function signInConfig() {
  const res = await fetch("/auth/config").catch(() => null);
  if (!res?.ok) return null;
  const config = await res.json();
  return config.authorizationEndpoint ? config : null;
}

/** Sends the browser to the provider, remembering what its answer must match. */
export async function beginSignIn(config) {
  const pending = { verifier: random(), state: random(), nonce: random() };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(config.authorizationEndpoint);
  const params = {
    response_type: "code",
    client_id: config.clientId,
    redirect_uri: redirectUri(),
    scope: config.scopes,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await challengeOf(pending.verifier),
    code_challenge_method: "S256",
  };
  // RFC 8707 resource indicators are URIs; other providers read `audience`.
  params[/^[a-z][a-z0-9+.-]*:/i.test(config.audience) ? "resource" : "audience"] = config.audience;
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  location.assign(url.toString());
}

async function tokenRequest(path, body) {
  const res = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(answer.error_description ?? `sign-in failed (HTTP ${res.status})`);
  return answer;
}

function save(t, previous = {}) {
  const tokens = {
    access_token: t.access_token,
    refresh_token: t.refresh_token ?? previous.refresh_token,
    expires_at: t.expires_in ? Date.now() + t.expires_in * 1000 : null,
  };
  sessionStorage.setItem(TOKENS_KEY, JSON.stringify(tokens));
  return tokens;
}

export const signedIn = () => sessionStorage.getItem(TOKENS_KEY) !== null;
export const forgetSignIn = () => sessionStorage.removeItem(TOKENS_KEY);

/** Back from the provider (?code=…&state=…, or ?error=…): true once signed in; false when this
 * load is no such return. Throws what went wrong. */
export async function finishSignIn(config) {
  const answer = new URLSearchParams(location.search);
  if (!answer.has("code") && !answer.has("error")) return false;
  // The code leaves the address (and the history) at once.
  history.replaceState(null, "", `${location.pathname}${location.hash}`);
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? "null");
  sessionStorage.removeItem(PENDING_KEY);
  if (!config || !pending || answer.get("state") !== pending.state)
    throw new Error("This sign-in answer is not the one this page asked for; sign in again.");
  if (answer.has("error"))
    throw new Error(`The identity provider said: ${answer.get("error_description") ?? answer.get("error")}`);
  const tokens = await tokenRequest("/auth/token", {
    client_id: config.clientId,
    code: answer.get("code"),
    code_verifier: pending.verifier,
    redirect_uri: redirectUri(),
    nonce: pending.nonce,
  });
  save(tokens);
  return true;
}

let refreshing = null;

/** The access token, refreshed first when it is about to expire (or `force`: the API refused it);
 * null when there is none to get. Concurrent callers share one refresh: a refresh token may be
 * good for one use. */
export async function accessToken(config, force = false) {
  const t = JSON.parse(sessionStorage.getItem(TOKENS_KEY) ?? "null");
  if (!t) return null;
  const due = force || (t.expires_at !== null && t.expires_at - Date.now() < REFRESH_MARGIN_MS);
  if (!due) return t.access_token;
  if (!t.refresh_token) return null;
  refreshing ??= tokenRequest("/auth/refresh", { client_id: config.clientId, refresh_token: t.refresh_token })
    .then((fresh) => save(fresh, t).access_token)
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}
