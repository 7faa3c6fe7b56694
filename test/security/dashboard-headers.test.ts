// The dashboard sends no Referer, loads nothing but its own files and connects to its own server
// only (the identity provider through the API's /auth routes); `fleetq dev` links to it with a
// VIEWER token in the URL fragment (never sent to a server), not the ADMIN's in the query.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROOT } from "../cli/run-cli.js";
import { startTestApi, type TestApi } from "../helpers/api.js";

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => t?.close());

it("the page and its files carry Referrer-Policy no-referrer and a Content-Security-Policy", async () => {
  const base = t.url.replace(/\/graphql$/, "");
  for (const file of ["/", "/dashboard/style.css"]) {
    const r = await fetch(`${base}${file}`);
    expect(r.headers.get("referrer-policy"), file).toBe("no-referrer");
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp, file).toMatch(/default-src 'self'.*frame-ancestors 'none'/);
    // Same-origin WebSockets match 'self' (CSP Level 3): no other host, ws: or wss: anywhere.
    expect(csp.split("; "), file).toContain("connect-src 'self'");
    expect(csp, file).not.toMatch(/\bwss?:/);
  }
});

it("the dashboard reads its token from the fragment, and the dev banner links with a VIEWER token", () => {
  const app = readFileSync(path.join(ROOT, "src/dashboard/public/app.js"), "utf8");
  expect(app).toContain("location.hash");
  expect(app).not.toContain("location.search)");
  const banner = readFileSync(path.join(ROOT, "src/cli/dev/banner.ts"), "utf8");
  expect(banner).toMatch(/Dashboard.*#token=\$\{dev\.tokens\.viewer\}/);
});
