// A person at the test OpenID provider's own pages (oidc-provider's device and dev interaction
// pages), over HTTP with a cookie jar and no browser: each page's form is filled as a person
// would (the user code, any login, consent) and sent; redirects are followed by hand until the
// provider sends the person back to `stopAt` (code flow) or shows a page without a form
// (the device flow's success page).

export interface PersonOptions {
  /** The login typed at the provider's sign-in page (the account's subject). */
  login: string;
  /** Device flow: the code the CLI printed. */
  userCode?: string;
  /** Device flow: press "Abort" at the confirmation page instead of continuing. */
  abort?: boolean;
  /** Code flow: the redirect URI; the walk ends at the provider's redirect to it. */
  stopAt?: string;
}

export interface WalkEnd {
  /** The redirect to `stopAt` (with code, state, iss), or the last page's address. */
  url: string;
  /** The last page's HTML (empty at a redirect to `stopAt`). */
  html: string;
}

interface Form {
  action: string;
  fields: Record<string, string>;
  /** Names of text inputs (the ones a person types in). */
  typed: string[];
}

const attr = (tag: string, name: string) =>
  tag.match(new RegExp(`\\b${name}="([^"]*)"`))?.[1]?.replaceAll("&amp;", "&");

function firstForm(html: string, base: string): Form | null {
  const m = html.match(/<form\b([^>]*)>([\s\S]*?)<\/form>/);
  if (!m) return null;
  const fields: Record<string, string> = {};
  const typed: string[] = [];
  for (const [input] of m[2]!.matchAll(/<input\b[^>]*>/g)) {
    const name = attr(input, "name");
    if (!name) continue;
    if (attr(input, "type") === "hidden") fields[name] = attr(input, "value") ?? "";
    else typed.push(name);
  }
  return { action: new URL(attr(m[1]!, "action") ?? base, base).toString(), fields, typed };
}

class CookieJar {
  private cookies = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(";");
      const [name, value = ""] = pair!.split("=");
      const gone = attrs.some((a) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(a));
      if (gone) this.cookies.delete(name!.trim());
      else this.cookies.set(name!.trim(), value);
    }
  }
  header(): string {
    return [...this.cookies].map(([n, v]) => `${n}=${v}`).join("; ");
  }
}

/** What a person enters in the form. */
function fill(form: Form, p: PersonOptions): Record<string, string> {
  const out = { ...form.fields };
  if (form.typed.includes("user_code")) out.user_code = p.userCode ?? "";
  if (out.prompt === "login") Object.assign(out, { login: p.login, password: "any" });
  if (out.confirm === "yes" && p.abort) out.abort = "yes";
  return out;
}

/** Walks the provider's pages from `start` (the verification URI or an authorization URL). */
export async function walkProviderPages(start: string, person: PersonOptions): Promise<WalkEnd> {
  const jar = new CookieJar();
  let url = start;
  let init: RequestInit = {};
  let aborted = false;
  for (let step = 0; step < 30; step++) {
    const res = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
    });
    jar.take(res);
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      url = new URL(location, url).toString();
      init = {};
      await res.body?.cancel();
      if (person.stopAt && url.startsWith(person.stopAt)) return { url, html: "" };
      continue;
    }
    const html = await res.text();
    const form = firstForm(html, url);
    // After "Abort" the provider asks for a code again: the person stops there.
    if (!form || res.status >= 400 || aborted) return { url, html };
    const fields = fill(form, person);
    aborted = fields.abort === "yes";
    url = form.action;
    init = {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    };
  }
  throw new Error(`the provider's pages did not end within 30 steps (at ${url})`);
}
