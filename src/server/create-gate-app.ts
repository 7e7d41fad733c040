import { createHash } from "node:crypto";
import type { Context } from "hono";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getCookie } from "hono/cookie";
import { redactSecrets } from "../errors/redact-secrets.js";
import { inOffloadLane } from "../offload/run-off-thread.js";
import { renderErrorPage } from "../web/render-error-page.js";
import { type AccessLogEntry, createGateContext, type Env, type GateApp, type GateContext, type GateServerConfig } from "./gate-context.js";
import { describePublicProblem, HttpProblem, homeFolders } from "./http-problem.js";
import { pagePaths } from "./page-views.js";
import { readOncePerRequest } from "./read-once-per-request.js";
import { guardHostAndOrigin, securityHeaders } from "./request-guards.js";
import { addAgentActionRoutes, addAgentReadRoutes, addMcpRoute } from "./routes/agent-api.js";
import { addDecisionRoutes } from "./routes/decisions.js";
import { addDiscoveryRoutes } from "./routes/discovery.js";
import { addEnrolRoutes } from "./routes/enrol.js";
import { addPageRoutes } from "./routes/pages.js";
import { addSignInRoutes } from "./routes/sign-in.js";

export type { AccessLogEntry, GateServerConfig } from "./gate-context.js";

const MAX_BODY_BYTES = 256 * 1024;

/**
 * The gate server's application (SPEC §10): the JSON API, the review pages,
 * passkey enrolment and sign-in, and the assets, each route calling the
 * same library functions as the CLI. Agents authenticate with bearer tokens
 * scoped to status, freeze, present, admission check and result; every
 * human decision needs a signed-in reviewer, a CSRF token and a passkey
 * assertion over the receipt. The routes live in `routes/`, one file per
 * area; this assembles them behind the guards every request passes.
 */
export function createGateApp(config: GateServerConfig): { app: Hono<Env>; inFlight: () => number } {
  // A run is read (parsed, verified) once per request, however many layers ask for it.
  const perRequest = readOncePerRequest(config.store);
  const ctx = createGateContext(config, perRequest.store);
  const app: GateApp = new Hono<Env>();
  // Every message that leaves the server (answers, the log, stderr) names the home instead of spelling it out.
  const folders = homeFolders(ctx.home);
  const redact = (text: string) => redactSecrets(text, { folders });
  const log = config.log
    ? (entry: AccessLogEntry) => config.log?.({ ...entry, ...(entry.code ? { code: redact(entry.code) } : {}) })
    : undefined;
  let inFlight = 0;

  app.use("*", (_c, next) => perRequest.run(next));
  // Each caller's work off the thread takes its turn with everyone else's: an agent's queue of freezes holds one worker at most.
  app.use("*", (c, next) => inOffloadLane(offloadLaneOf(c.req.header("authorization"), getCookie(c, ctx.sessionCookie)), next));
  app.use("*", async (c, next) => {
    const started = performance.now();
    inFlight++;
    try {
      await next();
    } finally {
      inFlight--;
      const p = c.get("principal");
      log?.({
        at: ctx.now().toISOString(),
        method: c.req.method,
        path: loggedPath(new URL(c.req.url).pathname),
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        who: !p || p.kind === "anonymous" ? "-" : p.kind === "agent" ? `agent:${p.token.agent}` : `reviewer:${p.session.reviewer}`,
        ...(c.get("problemCode") ? { code: c.get("problemCode") } : {}),
      });
    }
  });
  addGuards(app, ctx);
  app.onError((error, c) => {
    const { status, body } = describePublicProblem(error, folders);
    c.set("problemCode", body.code);
    // The store could not answer: a proxy or client may ask again shortly.
    if (status === 503) c.header("Retry-After", "2");
    if (status === 500)
      process.stderr.write(
        redact(`twinlock serve: internal error on ${c.req.method} ${loggedPath(new URL(c.req.url).pathname)}: ${(error as Error).stack}\n`),
      );
    if (wantsHtml(c)) {
      const html = renderErrorPage({
        layout: ctx.layoutFor(c),
        status,
        title: titleFor(status),
        message: body.message,
        remedy: remedyFor(body.code),
        link: body.code === "SIGN_IN" ? { url: "/signin", label: "Sign in" } : { url: "/", label: "All runs" },
      });
      return c.html(html, status as 400);
    }
    const stale = body.code === "STALE_HASH" ? staleUrl(c) : undefined;
    // The library's stale-hash refusal tells a terminal user which command to run; the page says it in its own words.
    const message =
      body.code === "STALE_HASH" && typeof body.details.current_revision === "number"
        ? `This plan changed while you were reading it: you decided on ${typeof body.details.given_revision === "number" ? `revision ${body.details.given_revision}` : "a version that is not this plan's"}, and the current one is revision ${body.details.current_revision}. Nothing was recorded; read the current revision and decide on it.`
        : body.message;
    return c.json({ ...body, message, ...(stale ? { stale_url: stale } : {}) }, status as 400);
  });
  app.notFound((c) => {
    throw new HttpProblem(404, "NOT_FOUND", `nothing at ${new URL(c.req.url).pathname}`);
  });

  addDiscoveryRoutes(app, ctx, log);
  addPageRoutes(app, ctx);
  addSignInRoutes(app, ctx);
  addEnrolRoutes(app, ctx);
  addAgentReadRoutes(app, ctx);
  addAgentActionRoutes(app, ctx);
  addMcpRoute(app, ctx);
  addDecisionRoutes(app, ctx);
  return { app, inFlight: () => inFlight };
}

/** The guards every request passes before a route: security headers, host and origin, the body limit, and who is asking. */
function addGuards(app: GateApp, ctx: GateContext): void {
  const { config } = ctx;
  const allowedOrigins = new Set(config.allowedHosts.map((h) => `${config.tls ? "https" : "http"}://${h}`));
  app.use("*", securityHeaders(config.tls));
  app.use("*", guardHostAndOrigin(new Set(config.allowedHosts), allowedOrigins));
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new HttpProblem(413, "TOO_LARGE", `the request body is over ${MAX_BODY_BYTES} bytes`);
      },
    }),
  );
  app.use("*", async (c, next) => {
    // A team store's trust files (tokens, reviewers, pins) are brought up to the database's before anything reads them.
    await ctx.home.shared?.refresh();
    c.set("principal", await ctx.identify(c));
    await next();
  });
}

/** The revision page of a pair whose decision was stale, from the API path it was sent to. */
function staleUrl(c: Context<Env>): string | undefined {
  const m = /^\/api\/runs\/(run_[0-9a-f]{16})\/pairs\/([^/]+)\//.exec(new URL(c.req.url).pathname);
  return m ? `${pagePaths.run(m[1] as string)}/pairs/${m[2]}` : undefined;
}

/** A request's path as the access log keeps it: an enrolment link's one-time token is a secret, so it is left out. */
function loggedPath(pathname: string): string {
  return pathname.replace(/^\/enrol\/[^/]+/, "/enrol/:token");
}

function wantsHtml(c: Context): boolean {
  const p = new URL(c.req.url).pathname;
  return (
    c.req.method === "GET" && !p.startsWith("/api/") && !p.startsWith("/assets/") && (c.req.header("accept") ?? "").includes("text/html")
  );
}

function titleFor(status: number): string {
  return status === 401
    ? "Sign in"
    : status === 403
      ? "Not allowed"
      : status === 404
        ? "Not found"
        : status === 503
          ? "Unavailable for a moment"
          : status >= 500
            ? "Server error"
            : "Refused";
}

function remedyFor(code: string): string {
  return code === "SIGN_IN"
    ? "Sign in with your passkey."
    : code === "UNKNOWN_INVITATION"
      ? "Ask for a new enrolment link."
      : code === "UNAVAILABLE"
        ? "Nothing was decided by this request unless the message says it may have been: reload the run, then try again."
        : "Go back to the list of runs.";
}

/**
 * Whose turn a request's work off the thread takes (`inOffloadLane`): its
 * agent token's ID, its session cookie's digest, or the anonymous lane. It
 * is read before anything is checked, so it orders work and grants nothing.
 */
function offloadLaneOf(authorization: string | undefined, session: string | undefined): string {
  const token = /^Bearer (tl_[0-9a-f]{16})_/.exec(authorization ?? "")?.[1];
  if (token) return `agent:${token}`;
  if (session) return `session:${createHash("sha256").update(session).digest("hex").slice(0, 32)}`;
  return "anonymous";
}
