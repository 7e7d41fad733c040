import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { z } from "zod";
import { canonicalJson } from "../crypto/canonical-hash.js";
import { RefusalError } from "../errors/errors.js";
import { redactSecrets } from "../errors/redact-secrets.js";
import { admit } from "../gate/admit.js";
import { approveApply } from "../gate/approve-apply.js";
import { closeWorkflow } from "../gate/close-workflow.js";
import { consentPairExecution } from "../gate/consent-pair-execution.js";
import { exportRun } from "../gate/export-run.js";
import { freezePairHandoff } from "../gate/freeze-pair-handoff.js";
import { raiseStop, resolveStop } from "../gate/hard-stops.js";
import { pairStatusFromRun } from "../gate/pair-status.js";
import { presentPlan } from "../gate/present-plan.js";
import { reviewPairPlan } from "../gate/review-pair-plan.js";
import { inOffloadLane } from "../offload/run-off-thread.js";
import { PACKAGE_ROOT } from "../package-root.js";
import { findUsableInvitation, finishEnrolment, startEnrolment } from "../passkey/passkey-enrolment.js";
import { findCredential, readReviewerRegistry } from "../passkey/reviewer-registry.js";
import { requireWorkflow } from "../run/refuse-transition.js";
import { MAX_STOPS_PER_LIFT, RUN_ID_PATTERN, type Workflow } from "../run/run-schema.js";
import { type LoadedRun, serializeRunFile } from "../store/run-file.js";
import { agentHandoffPath, type RunStore } from "../store/run-store.js";
import { PROMPT_ID_PATTERN } from "../suite/prompt.js";
import { renderEnrolPage } from "../web/render-enrol-page.js";
import { renderErrorPage } from "../web/render-error-page.js";
import { renderRevisionPage } from "../web/render-revision-page.js";
import { renderRunListPage } from "../web/render-run-list-page.js";
import { renderRunPage } from "../web/render-run-page.js";
import { renderSignInPage } from "../web/render-signin-page.js";
import type { LayoutView } from "../web/view-model.js";
import { type AgentToken, ANY_RUN, readTokenFreezeKey, type TokenScope, verifyAgentToken } from "./agent-tokens.js";
import {
  AdmissionCheckRequest,
  ApplyApprovalRequest,
  ConsentRequest,
  FreezeRequest,
  LiftStopRequest,
  ResultRequest,
  ReviewRequest,
  StopRequest,
} from "./api-schemas.js";
import { clientAddress, clientKey } from "./client-address.js";
import { describeProblem, describePublicProblem, HttpProblem, homeFolders } from "./http-problem.js";
import { buildOpenApi } from "./openapi.js";
import { otherRunFolders } from "./other-run-folders.js";
import { pagePaths, revisionPageView, runListView, runPageView } from "./page-views.js";
import {
  beginPasskeyDecision,
  completePasskeyDecision,
  type PasskeyDecision,
  type RelyingPartyInfo,
  requireAssertion,
} from "./passkey-decisions.js";
import { PendingSignatures, SealedSignins } from "./pending-signatures.js";
import { readOncePerRequest } from "./read-once-per-request.js";
import { FailureBudget, guardHostAndOrigin, rateLimit, securityHeaders } from "./request-guards.js";
import { type ReviewerSession, ReviewerSessions, sameToken } from "./reviewer-sessions.js";

/** How the gate server is set up: its store, the origin people open, the host names it answers to. */
export interface GateServerConfig {
  store: RunStore;
  /** The origin reviewers open (`http://localhost:7420`); passkeys are bound to its host name. */
  origin: string;
  /** `Host` header values accepted (DNS rebinding defence). */
  allowedHosts: readonly string[];
  tls: boolean;
  /** Plain HTTP on a non-loopback address, chosen with --insecure-http: every page says so. */
  insecureHttp: boolean;
  now?: () => Date;
  /** One structured line per request (no secrets). */
  log?: (entry: AccessLogEntry) => void;
  /** For a store whose runs are not files: the folder agents' first freezes must be inside (`serve --handoff-root`). */
  handoffRoot?: string;
  /** Reverse proxies whose `X-Forwarded-For` names the client (`serve --trusted-proxy`); from anyone else it is ignored. */
  trustedProxies?: readonly string[];
}

/** One access-log line: never a token, cookie, body or query string. */
export interface AccessLogEntry {
  at: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  who: string;
  code?: string;
}

/** Who is asking: an agent with a token, a reviewer signed in with a passkey, or nobody. */
type Principal = { kind: "agent"; token: AgentToken } | { kind: "reviewer"; session: ReviewerSession } | { kind: "anonymous" };

type Env = { Variables: { principal: Principal; problemCode?: string } };

/** The session cookie's name: over https a `__Host-` cookie (Secure, Path=/, no Domain: no other host or plain-HTTP page can set or read it). */
function sessionCookieName(tls: boolean): string {
  return tls ? "__Host-twinlock_session" : "twinlock_session";
}

/**
 * The part of a session cookie that binds it to one origin: a digest of the
 * origin the server answered on at sign-in and the session's own secret.
 * Browsers send a host's cookies to every port of it; a cookie presented on
 * another port or origin (another server, or this one answering elsewhere)
 * does not carry that origin's tag, and is no session there.
 */
function originTag(origin: string, session: ReviewerSession): string {
  return createHash("sha256").update(`twinlock-session-origin/1|${origin}|${session.csrf}`).digest("base64url").slice(0, 22);
}
const MAX_BODY_BYTES = 256 * 1024;

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

/**
 * The gate server's application (SPEC §10): the JSON API, the review pages,
 * passkey enrolment and sign-in, and the assets, each route calling the
 * same library functions as the CLI. Agents authenticate with bearer tokens
 * scoped to status, freeze, present, admission check and result; every
 * human decision needs a signed-in reviewer, a CSRF token and a passkey
 * assertion over the receipt.
 */
export function createGateApp(config: GateServerConfig): { app: Hono<Env>; inFlight: () => number } {
  // A run is read (parsed, verified) once per request, however many layers ask for it.
  const perRequest = readOncePerRequest(config.store);
  const store = perRequest.store;
  const home = store.home;
  const now = config.now ?? (() => new Date());
  const {
    sessions,
    decisions: pending,
    signins: signinChallenges,
  } = store.serverState ?? {
    sessions: new ReviewerSessions(),
    decisions: new PendingSignatures(),
    // Sealed in the browser's cookie: nothing is kept per anonymous start, so no flood pushes a reviewer's sign-in out.
    signins: new SealedSignins(),
  };
  const trustedProxies = new Set(config.trustedProxies ?? []);
  const clientOf = (c: Context): string => clientKey(clientAddress(peerAddress(c), c.req.header("x-forwarded-for"), trustedProxies));
  const origin = new URL(config.origin);
  const rp: RelyingPartyInfo = { id: origin.hostname, name: "twinlock", origin: origin.origin };
  const secureCookie = config.tls;
  const SESSION_COOKIE = sessionCookieName(config.tls);
  /** The origin a request came to: the scheme this server speaks and the `Host` it was sent to (already one of the allowed hosts). */
  const requestOrigin = (c: Context): string => `${config.tls ? "https" : "http"}://${(c.req.header("host") ?? "").toLowerCase()}`;
  const assets = assetTable();
  let inFlight = 0;
  const app = new Hono<Env>();
  // Every message that leaves the server (answers, the log, stderr) names the home instead of spelling it out.
  const folders = homeFolders(home);
  const redact = (text: string) => redactSecrets(text, { folders });
  const log = config.log
    ? (entry: AccessLogEntry) => config.log?.({ ...entry, ...(entry.code ? { code: redact(entry.code) } : {}) })
    : undefined;
  const allowedOrigins = new Set(config.allowedHosts.map((h) => `${config.tls ? "https" : "http"}://${h}`));

  app.use("*", (_c, next) => perRequest.run(next));
  // Each caller's work off the thread takes its turn with everyone else's: an agent's queue of freezes holds one worker at most.
  app.use("*", (c, next) => inOffloadLane(offloadLaneOf(c.req.header("authorization"), getCookie(c, SESSION_COOKIE)), next));
  app.use("*", async (c, next) => {
    const started = performance.now();
    inFlight++;
    try {
      await next();
    } finally {
      inFlight--;
      const p = c.get("principal");
      log?.({
        at: now().toISOString(),
        method: c.req.method,
        path: loggedPath(new URL(c.req.url).pathname),
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        who: !p || p.kind === "anonymous" ? "-" : p.kind === "agent" ? `agent:${p.token.agent}` : `reviewer:${p.session.reviewer}`,
        ...(c.get("problemCode") ? { code: c.get("problemCode") } : {}),
      });
    }
  });
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
    await home.shared?.refresh();
    c.set("principal", await identify(c));
    await next();
  });

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
        layout: layoutFor(c),
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

  // ---- who is asking
  async function identify(c: Context<Env>): Promise<Principal> {
    const auth = c.req.header("authorization");
    if (auth !== undefined) {
      const m = /^Bearer (\S+)$/.exec(auth);
      if (!m) throw new HttpProblem(401, "BAD_TOKEN", "the Authorization header must be `Bearer <token>`");
      const verdict = verifyAgentToken(home, m[1] as string, now());
      if (!verdict.ok)
        throw new HttpProblem(
          401,
          "BAD_TOKEN",
          `the token is ${verdict.reason}; ask a person for a new one (\`twinlock token create\`, or \`--ci\` for CI)`,
        );
      return { kind: "agent", token: verdict.token };
    }
    const [id, tag] = (getCookie(c, SESSION_COOKIE) ?? "").split(".", 2);
    const found = await sessions.find(id, now().getTime());
    // The cookie must carry the tag of the origin this request came to: another port's or host's cookie is no session here.
    const session = found && sameToken(tag, originTag(requestOrigin(c), found)) ? found : undefined;
    if (session) {
      // A reviewer revoked since signing in is signed out at once.
      const enrolled = readReviewerRegistry(home).reviewers.find((r) => r.name === session.reviewer && !r.revoked);
      if (enrolled) return { kind: "reviewer", session };
      await sessions.closeReviewer(session.reviewer);
    }
    return { kind: "anonymous" };
  }

  function layoutFor(c: Context<Env>): LayoutView {
    const p = c.get("principal");
    return {
      reviewer: p?.kind === "reviewer" ? p.session.reviewer : null,
      csrf: p?.kind === "reviewer" ? p.session.csrf : "",
      insecureHttp: config.insecureHttp,
    };
  }

  /** An agent whose token covers this run (and pair) and scope, or any signed-in reviewer. */
  function requireReader(c: Context<Env>, scope: TokenScope, runId: string, planner?: string): Principal {
    const p = c.get("principal");
    if (p.kind === "reviewer") return p;
    if (p.kind === "anonymous") throw new HttpProblem(401, "SIGN_IN", "sign in with your passkey, or send an agent token");
    const t = p.token;
    if (!t.scopes.includes(scope)) throw new HttpProblem(403, "TOKEN_SCOPE", `this agent token does not have the ${scope} scope`);
    // A CI token made for every run reads exports and nothing else (its scope was checked above).
    const anyRun = t.run_id === ANY_RUN && scope === "export";
    if (t.run_id !== runId && !anyRun) throw new HttpProblem(403, "TOKEN_RUN", `this agent token is for run ${t.run_id}, not ${runId}`);
    if (planner !== undefined && t.planner !== null && t.planner !== planner)
      throw new HttpProblem(403, "TOKEN_PAIR", `this agent token is for ${t.planner}, not ${planner}`);
    return p;
  }

  /**
   * A human route: a signed-in reviewer (never an agent token, whatever its
   * scopes), the session's CSRF token, and the right the decision needs.
   */
  async function requireReviewer(c: Context<Env>, fields: Record<string, unknown>, right?: string): Promise<ReviewerSession> {
    const p = c.get("principal");
    if (p.kind === "agent")
      throw new HttpProblem(
        403,
        "AGENT_FORBIDDEN",
        "agent tokens cannot make human decisions (review, consent, apply approval, stops); a person decides in the browser",
      );
    if (p.kind === "anonymous") throw new HttpProblem(401, "SIGN_IN", "sign in with your passkey first");
    const csrf = c.req.header("x-csrf-token") ?? (typeof fields.csrf === "string" ? fields.csrf : undefined);
    if (!sameToken(csrf, p.session.csrf)) throw new HttpProblem(403, "CSRF", "the form's CSRF token is missing or stale; reload the page");
    if (right !== undefined) {
      const reviewer = readReviewerRegistry(home).reviewers.find((r) => r.name === p.session.reviewer);
      if (!reviewer?.rights.includes(right as never))
        throw new HttpProblem(
          403,
          "NO_RIGHT",
          `${p.session.reviewer} does not have the ${right} right (rights: ${reviewer?.rights.join(", ") ?? "none"})`,
        );
    }
    return p.session;
  }

  async function findRun(runId: string): Promise<{ ref: string; run: LoadedRun }> {
    if (!RUN_ID_PATTERN.test(runId)) throw new HttpProblem(404, "UNKNOWN_RUN", `${JSON.stringify(runId.slice(0, 40))} is not a run ID`);
    const ref = await store.resolve(runId);
    if (ref === undefined) throw new HttpProblem(404, "UNKNOWN_RUN", `no run ${runId} in ${store.label}`);
    const run = await store.read(ref);
    // A run file swapped in under another run's checkpoint is not that run.
    if (run.state.run_id !== runId)
      throw new HttpProblem(409, "INTEGRITY", `the run file recorded for ${runId} now holds run ${run.state.run_id}`);
    return { ref, run };
  }

  function staleUrl(c: Context<Env>): string | undefined {
    const m = /^\/api\/runs\/(run_[0-9a-f]{16})\/pairs\/([^/]+)\//.exec(new URL(c.req.url).pathname);
    return m ? `${pagePaths.run(m[1] as string)}/pairs/${m[2]}` : undefined;
  }

  // ---- body parsing: JSON, or a form (browsers), into one request object
  async function readFields(c: Context<Env>): Promise<Record<string, unknown>> {
    const type = c.req.header("content-type") ?? "";
    // The media type alone, as RFC 9110 reads it (case-insensitive, parameters after `;`): `application/jsonx` is not JSON.
    const media = (type.split(";")[0] ?? "").trim().toLowerCase();
    if (media === "application/json") {
      let json: unknown;
      try {
        json = await c.req.json();
      } catch {
        throw new HttpProblem(400, "BAD_INPUT", "the request body is not valid JSON");
      }
      if (typeof json !== "object" || json === null || Array.isArray(json))
        throw new HttpProblem(400, "BAD_INPUT", "the request body must be a JSON object");
      return json as Record<string, unknown>;
    }
    if (media === "multipart/form-data" || media === "application/x-www-form-urlencoded") {
      const body = await c.req.parseBody({ all: true });
      // No prototype: a field named `__proto__` or `constructor` is a field like any other, then refused by the strict schemas.
      const out: Record<string, unknown> = Object.create(null);
      for (const [k, v] of Object.entries(body)) {
        const values = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === "string");
        out[k] = k === "actions" ? values : values[values.length - 1];
      }
      return out;
    }
    if (type === "" && c.req.method === "POST") return {};
    throw new HttpProblem(415, "BAD_INPUT", `send application/json or a form, not ${media}`);
  }

  function parse<S extends z.ZodType>(schema: S, fields: Record<string, unknown>): z.infer<S> {
    const { csrf: _c, challenge_id: _i, assertion: _a, ...rest } = fields;
    const parsed = schema.safeParse(rest);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new HttpProblem(400, "BAD_INPUT", `${issue?.path.join(".") || "body"}: ${issue?.message}`);
    }
    return parsed.data;
  }

  /** The two halves of a passkey decision on one path: `…/challenge` asks, the path itself completes. */
  function passkeyRoute(
    pathPattern: string,
    build: (
      c: Context<Env>,
      fields: Record<string, unknown>,
      session: ReviewerSession,
    ) => Promise<{ decision: PasskeyDecision; request: unknown; right?: string; done: (result: unknown) => Record<string, unknown> }>,
  ): void {
    app.post(`${pathPattern}/challenge`, async (c) => {
      const fields = await readFields(c);
      const session = await requireReviewer(c, fields);
      const d = await build(c, fields, session);
      if (d.right) await requireReviewer(c, fields, d.right);
      const challenge = await beginPasskeyDecision(d.decision, { home, session, request: d.request, pending, rp, now: now() });
      return c.json({ ok: true, ...challenge });
    });
    app.post(pathPattern, async (c) => {
      const fields = await readFields(c);
      const session = await requireReviewer(c, fields);
      const d = await build(c, fields, session);
      if (d.right) await requireReviewer(c, fields, d.right);
      const challengeId = typeof fields.challenge_id === "string" ? fields.challenge_id : "";
      const assertion = parseAssertion(fields.assertion);
      const result = await completePasskeyDecision(d.decision, {
        home,
        session,
        request: d.request,
        pending,
        rp,
        now: now(),
        challengeId,
        assertion,
      });
      return c.json({ ok: true, ...d.done(result) });
    });
  }

  // ---- assets and discovery
  app.get("/assets/:name", (c) => {
    const asset = assets.get(new URL(c.req.url).pathname);
    if (!asset) throw new HttpProblem(404, "NOT_FOUND", "no such asset");
    c.header("Cache-Control", "no-cache");
    return c.body(readFileSync(asset.file), 200, { "Content-Type": asset.type });
  });
  app.get("/openapi.json", (c) => c.json(buildOpenApi(config.origin)));
  app.get("/healthz", (c) => c.json({ ok: true }));
  // Ready when the store answers (the database reachable, the home readable): a load balancer's check.
  app.get("/readyz", async (c) => {
    // Anyone may ask (a proxy's health check): the answer names no host, user or database; the log says why.
    try {
      await store.ready();
      return c.json({ ok: true });
    } catch (error) {
      log?.({
        at: now().toISOString(),
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

  // ---- pages
  app.get("/", async (c) => {
    requireSignedInPage(c);
    return c.html(renderRunListPage(await runListView(store, layoutFor(c), await store.list())));
  });
  app.get("/runs/:runId", async (c) => {
    requireSignedInPage(c);
    const { run } = await findRun(param(c, "runId"));
    return c.html(renderRunPage(runPageView(run, layoutFor(c), true)));
  });
  app.get("/runs/:runId/pairs/:planner", async (c) => {
    requireSignedInPage(c);
    const { run } = await findRun(param(c, "runId"));
    const wf = requireWorkflow(run.state.workflows, promptParam(c, "planner"));
    return c.redirect(wf.handoff ? pagePaths.revision(run.state.run_id, wf.planner, wf.revision) : pagePaths.run(run.state.run_id), 303);
  });
  app.get("/runs/:runId/pairs/:planner/revisions/:revision", async (c) => {
    requireSignedInPage(c);
    const { ref, run } = await findRun(param(c, "runId"));
    const wf = requireWorkflow(run.state.workflows, promptParam(c, "planner"));
    const revision = Number(param(c, "revision"));
    if (!Number.isInteger(revision) || revision < 1) throw new HttpProblem(404, "UNKNOWN_REVISION", "revisions are numbered from 1");
    return c.html(renderRevisionPage(await revisionPageView(store, ref, run, wf, revision, layoutFor(c), true)));
  });

  /** Pages show the plan: only signed-in reviewers read them (agents use the API with their token). */
  function requireSignedInPage(c: Context<Env>): void {
    const p = c.get("principal");
    if (p.kind === "reviewer") return;
    if (p.kind === "agent") throw new HttpProblem(403, "AGENT_FORBIDDEN", "agent tokens cannot open the review pages; use the API");
    throw new HttpProblem(401, "SIGN_IN", "sign in with your passkey to see the runs");
  }

  // ---- sign-in and enrolment
  // A team store keeps each started sign-in in the database: starts are limited per client. In memory, a start keeps nothing.
  const signinStartLimit = store.serverState
    ? rateLimit("sign-in", 30, clientOf)
    : async (_c: Context, next: () => Promise<void>) => {
        await next();
      };
  const signinFailures = new FailureBudget("sign-in", 30);
  const enrolFailures = new FailureBudget("enrolment", 20);
  /** Run an attempt; a refusal counts against the client's budget, and past it is answered 429 (a success never is). */
  async function limitFailures<T>(c: Context, budget: FailureBudget, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const key = clientOf(c);
      const at = now().getTime();
      if (describeProblem(error).status < 500 && budget.fail(key, at)) {
        c.header("Retry-After", String(budget.retryAfter(key, at)));
        throw new HttpProblem(
          429,
          "RATE_LIMITED",
          `too many failed ${budget.kind} attempts from this address; wait a minute and try again`,
        );
      }
      throw error;
    }
  }
  app.get("/signin", (c) => c.html(renderSignInPage({ layout: layoutFor(c), next: null })));
  app.post("/signin/options", signinStartLimit, async (c) => {
    const entry = await signinChallenges.add({ reviewer: "", request: "signin", challenge: randomBytes(32), at: now() }, now().getTime());
    setCookie(c, "twinlock_signin", entry.id, { httpOnly: true, sameSite: "Strict", secure: secureCookie, path: "/signin", maxAge: 120 });
    return c.json({
      ok: true,
      options: {
        challenge: entry.challenge.toString("base64url"),
        rpId: rp.id,
        timeout: 120_000,
        userVerification: "required",
        allowCredentials: [],
      },
    });
  });
  app.post("/signin", async (c) =>
    limitFailures(c, signinFailures, async () => {
      const fields = await readFields(c);
      const entry = await signinChallenges.take(getCookie(c, "twinlock_signin") ?? "", now().getTime());
      deleteCookie(c, "twinlock_signin", { path: "/signin" });
      if (!entry) throw new HttpProblem(409, "CHALLENGE_EXPIRED", "the sign-in request expired; press the button again");
      const response = parseAssertion(fields.response);
      const found = findCredential(home, response.rawId);
      if (!found)
        throw new HttpProblem(
          403,
          "UNKNOWN_PASSKEY",
          "this passkey is not enrolled here; ask for an invitation (`twinlock reviewer invite NAME`)",
        );
      requireAssertion(found.credential, response, entry.challenge);
      const session = await sessions.open(found.reviewer.name, found.reviewer.rights, now().getTime());
      setCookie(c, SESSION_COOKIE, `${session.id}.${originTag(requestOrigin(c), session)}`, {
        httpOnly: true,
        sameSite: "Strict",
        secure: secureCookie,
        path: "/",
        maxAge: 8 * 3600,
      });
      return c.json({ ok: true, location: "/", reviewer: found.reviewer.name });
    }),
  );
  app.post("/signout", async (c) => {
    const fields = await readFields(c);
    const session = await requireReviewer(c, fields);
    await sessions.close(session.id);
    deleteCookie(c, SESSION_COOKIE, { path: "/", secure: secureCookie });
    // The page's script asks for JSON; a plain form post (no script) is sent on to the sign-in page.
    if (!(c.req.header("accept") ?? "").includes("application/json")) return c.redirect("/signin", 303);
    return c.json({ ok: true, location: "/signin" });
  });
  app.get("/enrol/:token", async (c) =>
    limitFailures(c, enrolFailures, async () => {
      const token = param(c, "token");
      const invitation = invitationFor(token);
      return c.html(
        renderEnrolPage({
          layout: layoutFor(c),
          name: invitation.name,
          rights: invitation.rights,
          expiresAt: invitation.expires_at,
          token,
        }),
      );
    }),
  );
  app.post("/enrol/:token/options", async (c) =>
    limitFailures(c, enrolFailures, async () => {
      const token = param(c, "token");
      const started = await startEnrolment(home, token, rp, now());
      return c.json({ ok: true, options: started.options });
    }),
  );
  app.post("/enrol/:token", async (c) =>
    limitFailures(c, enrolFailures, async () => {
      const token = param(c, "token");
      const fields = await readFields(c);
      // The challenge is the one startEnrolment recorded on the invitation (in the home, so any server of a team store finishes it).
      const expected = findUsableInvitation(home, token, now()).challenge;
      if (!expected) throw new HttpProblem(409, "CHALLENGE_EXPIRED", "start the registration again (press the button)");
      const done = await finishEnrolment(home, token, fields.response as RegistrationResponseJSON, expected, rp, now());
      return c.json({ ok: true, name: done.reviewer.name });
    }),
  );

  function invitationFor(token: string): { name: string; rights: string[]; expires_at: string } {
    try {
      return findUsableInvitation(home, token, now());
    } catch (error) {
      // The page does not say which: an unknown link, a used one and an expired one look alike to whoever guesses.
      if (!(error instanceof RefusalError)) throw error;
      throw new HttpProblem(
        404,
        "UNKNOWN_INVITATION",
        "this enrolment link is unknown, used or expired; ask for a new one (`twinlock reviewer invite NAME`)",
      );
    }
  }

  // ---- JSON API: reading (agents with a token, or reviewers)
  app.get("/api/runs", async (c) => {
    const p = c.get("principal");
    if (p.kind === "anonymous") throw new HttpProblem(401, "SIGN_IN", "sign in with your passkey, or send an agent token");
    const listings = await store.list();
    const visible = p.kind === "agent" ? listings.filter((l) => l.run_id === p.token.run_id) : listings;
    return c.json({ ok: true, runs: visible.map((l) => ({ run_id: l.run_id, revision: l.revision, updated_at: l.updated_at })) });
  });
  app.get("/api/runs/:runId", async (c) => {
    requireReader(c, "status", param(c, "runId"));
    const { run } = await findRun(param(c, "runId"));
    const p = c.get("principal");
    // A token for one pair sees only that pair of the run.
    const only = p.kind === "agent" ? p.token.planner : null;
    const state =
      only === null
        ? run.state
        : { ...run.state, workflows: Object.fromEntries(Object.entries(run.state.workflows).filter(([planner]) => planner === only)) };
    return c.json({ ok: true, run_id: run.state.run_id, revision: run.file.revision, state });
  });
  app.get("/api/runs/:runId/pairs/:planner", async (c) => {
    requireReader(c, "status", param(c, "runId"), promptParam(c, "planner"));
    const { ref, run } = await findRun(param(c, "runId"));
    return c.json({ ok: true, status: await pairStatusFromRun(store, ref, promptParam(c, "planner"), now(), run) });
  });
  app.get("/api/runs/:runId/pairs/:planner/plan", async (c) => {
    requireReader(c, "present", param(c, "runId"), promptParam(c, "planner"));
    const { ref } = await findRun(param(c, "runId"));
    const revision = c.req.query("revision");
    const p = await presentPlan(store, ref, promptParam(c, "planner"), revision ? { revision: Number(revision) } : {});
    return c.json({ ok: true, plan: p });
  });
  // The gate's own word for a run, for CI: its head signed as an export, with a CI token (`token create --ci`) or a session.
  app.get("/api/runs/:runId/export", async (c) => {
    requireReader(c, "export", param(c, "runId"));
    const { ref } = await findRun(param(c, "runId"));
    const { exported } = await exportRun(store, ref);
    return c.body(serializeRunFile(exported), 200, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  });
  app.post("/api/runs/:runId/pairs/:planner/freeze", async (c) => {
    requireReader(c, "freeze", param(c, "runId"), promptParam(c, "planner"));
    const body = parse(FreezeRequest, await readFields(c));
    const { ref, run } = await findRun(param(c, "runId"));
    const actor = actorOf(c);
    const p = c.get("principal");
    const frozenBefore = ownWorkflow(run, promptParam(c, "planner"))?.handoff?.dir;
    // A token made with --freeze-key signs the freeze with the planner's key the gate home keeps (signing suites need one).
    const key = p.kind === "agent" ? readTokenFreezeKey(home, p.token) : undefined;
    // Every freeze over the API is bounded, the folder named or the one frozen before (re-resolved, it could lead elsewhere now).
    const handoff = agentHandoffPath(store, ref, body.handoff_dir, {
      runId: run.state.run_id,
      frozenBefore,
      suiteRoot: run.state.suite.root,
      handoffRoot: config.handoffRoot,
      otherRunFolders: await otherRunFolders(store, ref),
    });
    // With a key the freeze is recorded as the key's owner (the suite lists who may freeze).
    const r = await freezePairHandoff({
      store,
      run: ref,
      planner: promptParam(c, "planner"),
      handoffDir: handoff.dir,
      confine: handoff.confine,
      actor: key ? undefined : actor,
      key,
      unchangedBecause: body.unchanged_because,
      now,
    });
    // The new revision's records are read and cut now, in the agent's turn off the thread, so the reviewer's first look finds them ready.
    presentPlan(store, ref, r.workflow.planner).catch(() => undefined);
    const runId = param(c, "runId");
    return c.json({
      ok: true,
      state: r.workflow.state,
      revision: r.workflow.revision,
      hash: r.hash,
      review_url: `${config.origin}${pagePaths.revision(runId, r.workflow.planner, r.workflow.revision)}`,
    });
  });
  app.post("/api/runs/:runId/executors/:executor/admission-check", async (c) => {
    const runId = param(c, "runId");
    const executor = promptParam(c, "executor");
    // Who asks, and for which run, before the run is read: an anonymous caller or another run's token learns nothing of it.
    requireReader(c, "admission_check", runId);
    const body = parse(AdmissionCheckRequest, await readFields(c));
    const { ref, run } = await findRun(runId);
    const wf = Object.values(run.state.workflows).find((w) => w.executor === executor);
    requireReader(c, "admission_check", runId, wf?.planner ?? body.planner);
    const r = await admit({
      store,
      run: ref,
      executor,
      planner: body.planner,
      mode: body.mode,
      environment: body.environment,
      actions: body.actions,
      dry: true,
      actor: actorOf(c),
      now,
    });
    return c.json({ ok: true, would_admit: r.admitted, checks: r.checks, unsigned: r.unsigned });
  });
  app.post("/api/runs/:runId/pairs/:planner/result", async (c) => {
    requireReader(c, "result", param(c, "runId"), promptParam(c, "planner"));
    const body = parse(ResultRequest, await readFields(c));
    const { ref } = await findRun(param(c, "runId"));
    const r = await closeWorkflow({
      store,
      run: ref,
      planner: promptParam(c, "planner"),
      result: body.result,
      residual: body.residual,
      actor: actorOf(c),
      now,
    });
    return c.json({ ok: true, state: r.workflow.state });
  });

  function actorOf(c: Context<Env>): string {
    const p = c.get("principal");
    return p.kind === "agent" ? `agent:${p.token.agent}` : p.kind === "reviewer" ? p.session.reviewer : "anonymous";
  }

  // ---- MCP over Streamable HTTP, for agents' tokens only (the same tools as `twinlock mcp`)
  app.all("/mcp", async (c) => {
    const p = c.get("principal");
    if (p.kind !== "agent")
      throw new HttpProblem(401, "AGENT_TOKEN", "the MCP endpoint is for agents: send `Authorization: Bearer <agent token>`");
    // The run is resolved, not read: each tool checks its scope before it reads the run.
    const ref = await store.resolve(p.token.run_id);
    if (ref === undefined) throw new HttpProblem(404, "UNKNOWN_RUN", `no run ${p.token.run_id} in ${store.label}`);
    const { serveMcpOverHttp } = await import("../mcp/serve-mcp-over-http.js");
    return serveMcpOverHttp(c.req.raw, {
      store,
      waitStore: config.store,
      token: p.token,
      ref,
      origin: config.origin,
      freezeKey: readTokenFreezeKey(home, p.token),
      handoffRoot: config.handoffRoot,
    });
  });

  // ---- JSON API: human decisions (passkey)
  passkeyRoute("/api/runs/:runId/pairs/:planner/review", async (c, fields, session) => {
    const runId = param(c, "runId");
    const planner = promptParam(c, "planner");
    const body = parse(ReviewRequest, fields);
    const { ref } = await findRun(runId);
    return {
      right: "review",
      request: { op: "review", runId, planner, ...body },
      decision: {
        kind: "receipt",
        run: (key, at) =>
          reviewPairPlan({
            store,
            run: ref,
            planner,
            decision: body.decision,
            feedback: body.feedback,
            handoffHash: body.handoff_hash,
            executorDigest: body.executor_digest,
            reviewer: session.reviewer,
            key,
            now: at,
          }),
      },
      done: (r) => decided(runId, (r as { workflow: Workflow }).workflow, (r as { receipt: unknown }).receipt),
    };
  });
  passkeyRoute("/api/runs/:runId/pairs/:planner/consent", async (c, fields, session) => {
    const runId = param(c, "runId");
    const planner = promptParam(c, "planner");
    const body = parse(ConsentRequest, consentFields(fields));
    const { ref, run } = await findRun(runId);
    requireShownSettings(run, body);
    return {
      right: "consent",
      request: { op: "consent", runId, planner, ...body },
      decision: {
        kind: "receipt",
        run: (key, at) =>
          consentPairExecution({
            store,
            run: ref,
            planner,
            approve: body.approve,
            handoffHash: body.handoff_hash,
            executorDigest: body.executor_digest,
            user: session.reviewer,
            key,
            expiresInMs: body.expires_in_minutes === undefined ? undefined : body.expires_in_minutes * 60_000,
            now: at,
          }),
      },
      done: (r) => decided(runId, (r as { workflow: Workflow }).workflow, (r as { receipt: unknown }).receipt),
    };
  });
  passkeyRoute("/api/runs/:runId/pairs/:planner/apply-approval", async (c, fields, session) => {
    const runId = param(c, "runId");
    const planner = promptParam(c, "planner");
    const body = parse(ApplyApprovalRequest, fields);
    const { ref } = await findRun(runId);
    return {
      right: "apply",
      request: { op: "apply", runId, planner, ...body },
      decision: {
        kind: "receipt",
        run: (key, at) =>
          approveApply({ store, run: ref, planner, approver: session.reviewer, handoffHash: body.handoff_hash, key, now: at }),
      },
      done: (r) => decided(runId, (r as { workflow: Workflow }).workflow, (r as { receipt: unknown }).receipt),
    };
  });
  passkeyRoute("/api/runs/:runId/stops", async (c, fields, session) => {
    const runId = param(c, "runId");
    const body = parse(StopRequest, { ...fields, workflow: emptyToUndefined(fields.workflow), note: emptyToUndefined(fields.note) });
    const { ref } = await findRun(runId);
    return {
      request: { op: "stop", runId, ...body },
      decision: {
        kind: "confirm",
        run: (at) =>
          raiseStop({ store, run: ref, reason: body.reason, workflow: body.workflow, note: body.note, actor: session.reviewer, now: at }),
      },
      done: () => ({ state: "stopped", location: pagePaths.run(runId), receipt: null }),
    };
  });
  passkeyRoute("/api/runs/:runId/stops/lift", async (c, fields, session) => {
    const runId = param(c, "runId");
    const body = parse(LiftStopRequest, {
      reason: fields.reason,
      workflow: emptyToUndefined(fields.workflow),
      stops: liftedStopsField(fields.stops),
      note: fields.note ?? fields.resolution,
    });
    const { ref } = await findRun(runId);
    return {
      right: "stop",
      request: { op: "lift", runId, ...body },
      decision: {
        kind: "receipt",
        run: (key, at) =>
          resolveStop({
            store,
            run: ref,
            reason: body.reason,
            workflow: body.workflow,
            stops: body.stops,
            note: body.note,
            actor: session.reviewer,
            key,
            now: at,
          }),
      },
      done: (r) => ({ state: "lifted", location: pagePaths.run(runId), receipt: (r as { receipt: unknown }).receipt }),
    };
  });

  function decided(runId: string, wf: Workflow, receipt: unknown): Record<string, unknown> {
    return { state: wf.state, receipt, location: wf.handoff ? pagePaths.revision(runId, wf.planner, wf.revision) : pagePaths.run(runId) };
  }

  return { app, inFlight: () => inFlight };
}

/**
 * The lift form's `stops` (comma-separated stop numbers) as the API's list; a
 * JSON list, or anything else, is left for the schema to judge.
 */
function liftedStopsField(value: unknown): unknown {
  if (typeof value !== "string" || value.length > 12 * MAX_STOPS_PER_LIFT) return value;
  const parts = value.split(",");
  return parts.every((p) => /^[1-9][0-9]{0,8}$/.test(p)) ? parts.map(Number) : value;
}

/** The consent form's fields as the API's request: `decision` approved/declined, numbers from text, empty meaning none. */
function consentFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...fields };
  if (typeof fields.decision === "string") {
    out.approve = fields.decision === "approved" ? true : fields.decision === "declined" ? false : fields.decision;
    delete out.decision;
  }
  for (const k of ["budget", "expires_in_minutes"]) {
    const v = fields[k];
    if (v === "") out[k] = k === "budget" ? null : undefined;
    else if (typeof v === "string") out[k] = /^\d{1,12}$/.test(v) ? Number(v) : v;
  }
  if (Array.isArray(fields.actions) && fields.actions.includes("all")) out.actions = "all";
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

/**
 * The consent binds the run's mode, environment, scope and budget. The form
 * repeats what it showed: a mismatch means the person saw something other
 * than what would be signed, and is refused.
 */
function requireShownSettings(run: LoadedRun, body: z.infer<typeof ConsentRequest>): void {
  const s = run.state.settings;
  const differs: string[] = [];
  if (body.mode !== undefined && body.mode !== s.mode) differs.push(`mode ${body.mode} (the run's is ${s.mode})`);
  if (body.environment !== undefined && body.environment !== s.environment)
    differs.push(`environment ${body.environment} (the run's is ${s.environment})`);
  if (body.actions !== undefined && canonicalJson(body.actions) !== canonicalJson(s.actions))
    differs.push(`actions ${JSON.stringify(body.actions)} (the run's are ${JSON.stringify(s.actions)})`);
  if (body.budget !== undefined && body.budget !== s.budget) differs.push(`budget ${body.budget} (the run's is ${s.budget})`);
  if (differs.length > 0)
    throw new HttpProblem(
      409,
      "SETTINGS_DIFFER",
      `consent binds the run's own settings; the form asked for ${differs.join(", ")}: start a new run for other settings`,
    );
}

/**
 * A prompt ID from the path (a planner or executor): anything that is not
 * one (`__proto__`, `constructor`, `toString`, …) is a 404 before it can
 * index a run's records.
 */
function promptParam(c: Context, name: string): string {
  const v = param(c, name);
  if (!PROMPT_ID_PATTERN.test(v))
    throw new HttpProblem(404, "UNKNOWN_PAIR", `${JSON.stringify(v.slice(0, 40))} is not a prompt ID (like MD-29)`);
  return v;
}

/** A path parameter; every route that asks for one declares it, so a missing one is a 404. */
function param(c: Context, name: string): string {
  const v = c.req.param(name);
  if (typeof v !== "string" || v === "") throw new HttpProblem(404, "NOT_FOUND", `missing ${name} in the path`);
  return v;
}

/** A run's workflow of this planner, only as the run's own record (never a built-in member of the object). */
function ownWorkflow(run: LoadedRun, planner: string): Workflow | undefined {
  return Object.hasOwn(run.state.workflows, planner) ? run.state.workflows[planner] : undefined;
}

function emptyToUndefined(v: unknown): unknown {
  return v === "" ? undefined : v;
}

function parseAssertion(raw: unknown): AuthenticationResponseJSON {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new HttpProblem(400, "BAD_INPUT", "the passkey's answer is not JSON");
    }
  }
  const a = value as AuthenticationResponseJSON | undefined;
  const ok =
    a &&
    typeof a === "object" &&
    typeof a.rawId === "string" &&
    a.response &&
    typeof a.response.authenticatorData === "string" &&
    typeof a.response.clientDataJSON === "string" &&
    typeof a.response.signature === "string";
  if (!ok) throw new HttpProblem(400, "BAD_INPUT", "the passkey's answer is missing (sign with your passkey through the page)");
  return a as AuthenticationResponseJSON;
}

/** A request's path as the access log keeps it: an enrolment link's one-time token is a secret, so it is left out. */
function loggedPath(pathname: string): string {
  return pathname.replace(/^\/enrol\/[^/]+/, "/enrol/:token");
}

/** The socket's peer address (no header is read here). */
function peerAddress(c: Context): string | undefined {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress;
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
