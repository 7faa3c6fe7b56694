// The web dashboard at `/`: static files from public/, its scripts bundled with graphql-ws and
// uPlot (the charts) into one file, uPlot's stylesheet served from its package — no CDN, works
// offline. The build writes the bundle (public/app.bundle.js in dist/); run from the sources
// (tests, development), esbuild bundles it on first request.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Express, NextFunction, Request, Response } from "express";

/** public/ beside this module (sources, tsc output), else dist/src/dashboard/public above it (the
 * bundled CLI runs from dist/cli/). */
function publicDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  if (existsSync(join(here, "public"))) return join(here, "public");
  for (let dir = here; ; dir = dirname(dir)) {
    const candidate = join(dir, "src", "dashboard", "public");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`dashboard files not found above ${here}`);
  }
}

const PUBLIC_DIR = publicDir();

const UPLOT_CSS = createRequire(import.meta.url).resolve("uplot/dist/uPlot.min.css");

let bundle: Promise<string> | null = null;

/** public/app.js and its imports (graphql-ws included) as one browser module. */
export function dashboardBundle(): Promise<string> {
  bundle ??= (async () => {
    const built = join(PUBLIC_DIR, "app.bundle.js");
    if (existsSync(built)) return readFileSync(built, "utf8");
    const { build } = await import("esbuild");
    const out = await build({
      entryPoints: [join(PUBLIC_DIR, "app.js")],
      bundle: true,
      write: false,
      format: "esm",
      platform: "browser",
      target: "es2020",
      minify: true,
      sourcemap: false,
      logLevel: "silent",
    });
    return out.outputFiles[0]!.text;
  })();
  bundle.catch(() => {
    bundle = null; // try again on the next request
  });
  return bundle;
}

const staticFile = (file: string, type: string) => {
  const text = readFileSync(file.startsWith("/") ? file : join(PUBLIC_DIR, file), "utf8");
  return (_req: Request, res: Response) =>
    void res.type(type).setHeader("cache-control", "no-cache").send(text);
};

/** The page loads only its own files and talks only to this server; it sends no Referer (the
 * address may still carry a token or a sign-in code for an instant) and cannot be framed. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  // Same-origin WebSockets match 'self' (CSP Level 3); the identity provider is reached through
  // this server's /auth routes, and the sign-in itself is a navigation, which connect-src leaves be.
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const securityHeaders = (_req: Request, res: Response, next: NextFunction) => {
  res.setHeader("referrer-policy", "no-referrer");
  res.setHeader("content-security-policy", DASHBOARD_CSP);
  res.setHeader("x-content-type-options", "nosniff");
  next();
};

export function mountDashboard(app: Express): void {
  app.use((req, res, next) =>
    req.path === "/" || req.path.startsWith("/dashboard/") ? securityHeaders(req, res, next) : next(),
  );
  app.get("/", staticFile("index.html", "html"));
  app.get("/dashboard/style.css", staticFile("style.css", "css"));
  app.get("/dashboard/uplot.css", staticFile(UPLOT_CSS, "css"));
  app.get("/favicon.ico", (_req, res) => void res.status(204).end());
  app.get("/dashboard/app.js", async (_req, res) => {
    try {
      res
        .type("js")
        .setHeader("cache-control", "no-cache")
        .send(await dashboardBundle());
    } catch (e) {
      res
        .status(500)
        .type("text/plain")
        .send(`dashboard bundle failed: ${(e as Error).message}\n`);
    }
  });
}
