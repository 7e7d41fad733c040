import { readFileSync } from "node:fs";
import path from "node:path";
import { PACKAGE_ROOT } from "../../package-root.js";
import type { AccessLogEntry, GateApp, GateContext } from "../gate-context.js";
import { HttpProblem } from "../http-problem.js";
import { buildOpenApi } from "../openapi.js";

/** The assets the pages load, all from this package (no CDN): path → file and type. */
function assetTable(): Map<string, { file: string; type: string }> {
  const root = PACKAGE_ROOT;
  const nm = (p: string) => path.join(root, "node_modules", p);
  const own = (p: string) => path.join(root, "src", "web", "assets", p);
  return new Map([
    ["/assets/htmx.min.js", { file: nm("htmx.org/dist/htmx.min.js"), type: "text/javascript; charset=utf-8" }],
    [
      "/assets/simplewebauthn-browser.js",
      { file: nm("@simplewebauthn/browser/dist/bundle/index.umd.min.js"), type: "text/javascript; charset=utf-8" },
    ],
    ["/assets/twinlock.js", { file: own("twinlock.js"), type: "text/javascript; charset=utf-8" }],
    ["/assets/twinlock.css", { file: own("twinlock.css"), type: "text/css; charset=utf-8" }],
  ]);
}

/** Assets, the OpenAPI document, and the health and readiness checks: open to anyone, naming nothing of the runs. */
export function addDiscoveryRoutes(app: GateApp, ctx: GateContext, log: ((entry: AccessLogEntry) => void) | undefined): void {
  const assets = assetTable();
  app.get("/assets/:name", (c) => {
    const asset = assets.get(new URL(c.req.url).pathname);
    if (!asset) throw new HttpProblem(404, "NOT_FOUND", "no such asset");
    c.header("Cache-Control", "no-cache");
    return c.body(readFileSync(asset.file), 200, { "Content-Type": asset.type });
  });
  app.get("/openapi.json", (c) => c.json(buildOpenApi(ctx.config.origin)));
  app.get("/healthz", (c) => c.json({ ok: true }));
  // Ready when the store answers (the database reachable, the home readable): a load balancer's check.
  app.get("/readyz", async (c) => {
    // Anyone may ask (a proxy's health check): the answer names no host, user or database; the log says why.
    try {
      await ctx.store.ready();
      return c.json({ ok: true });
    } catch (error) {
      log?.({
        at: ctx.now().toISOString(),
        method: "GET",
        path: "/readyz",
        status: 503,
        ms: 0,
        who: "-",
        code: `NOT_READY: ${(error as Error).message}`,
      });
      throw new HttpProblem(503, "NOT_READY", "the store does not answer; the server's log says why");
    }
  });
  // Browsers ask for it on every page; an empty answer keeps their consoles clean.
  app.get("/favicon.ico", (c) => c.body(null, 204));
}
