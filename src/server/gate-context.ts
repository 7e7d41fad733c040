import { createHash } from "node:crypto";
import type { Context, Hono } from "hono";
import { getCookie } from "hono/cookie";
import { readReviewerRegistry } from "../passkey/reviewer-registry.js";
import { RUN_ID_PATTERN } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore, ServerState } from "../store/run-store.js";
import type { LayoutView } from "../web/view-model.js";
import { type AgentToken, ANY_RUN, type TokenScope, verifyAgentToken } from "./agent-tokens.js";
import { clientAddress, clientKey } from "./client-address.js";
import { HttpProblem } from "./http-problem.js";
import type { RelyingPartyInfo } from "./passkey-decisions.js";
import { PendingSignatures, SealedSignins } from "./pending-signatures.js";
import { type ReviewerSession, ReviewerSessions, sameToken } from "./reviewer-sessions.js";
import { tokenProblem } from "./token-refusal.js";

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
export type Principal = { kind: "agent"; token: AgentToken } | { kind: "reviewer"; session: ReviewerSession } | { kind: "anonymous" };

/** What each request carries through the app: who asks, and the code of the problem it was answered with. */
export type Env = { Variables: { principal: Principal; problemCode?: string } };

/** The gate app's Hono application. */
export type GateApp = Hono<Env>;

/**
 * What every route file is given: the store (read once per request), the
 * server's state, and the checks each route makes of who is asking. Routes
 * hold no state of their own beyond what they are given here.
 */
export interface GateContext {
  config: GateServerConfig;
  store: RunStore;
  home: RunStore["home"];
  now: () => Date;
  sessions: ServerState["sessions"];
  pending: ServerState["decisions"];
  signins: ServerState["signins"];
  rp: RelyingPartyInfo;
  secureCookie: boolean;
  sessionCookie: string;
  /** The key a client's requests are counted under (its address, through trusted proxies only). */
  clientOf(c: Context): string;
  /** The origin a request came to: the scheme this server speaks and the `Host` it was sent to (already one of the allowed hosts). */
  requestOrigin(c: Context): string;
  /** Who is asking: a verified agent token, a session cookie of this origin whose reviewer is still enrolled, or nobody. */
  identify(c: Context<Env>): Promise<Principal>;
  layoutFor(c: Context<Env>): LayoutView;
  /** An agent whose token covers this run (and pair) and scope, or any signed-in reviewer. */
  requireReader(c: Context<Env>, scope: TokenScope, runId: string, planner?: string): Principal;
  /** A human route: a signed-in reviewer (never an agent token, whatever its scopes), the session's CSRF token, and the right the decision needs. */
  requireReviewer(c: Context<Env>, fields: Record<string, unknown>, right?: string): Promise<ReviewerSession>;
  /** Pages show the plan: only signed-in reviewers read them (agents use the API with their token). */
  requireSignedInPage(c: Context<Env>): void;
  findRun(runId: string): Promise<{ ref: string; run: LoadedRun }>;
  actorOf(c: Context<Env>): string;
}

/** The session cookie's name: over https a `__Host-` cookie (Secure, Path=/, no Domain: no other host or plain-HTTP page can set or read it). */
export function sessionCookieName(tls: boolean): string {
  return tls ? "__Host-twinlock_session" : "twinlock_session";
}

/**
 * The part of a session cookie that binds it to one origin: a digest of the
 * origin the server answered on at sign-in and the session's own secret.
 * Browsers send a host's cookies to every port of it; a cookie presented on
 * another port or origin (another server, or this one answering elsewhere)
 * does not carry that origin's tag, and is no session there.
 */
export function originTag(origin: string, session: ReviewerSession): string {
  return createHash("sha256").update(`twinlock-session-origin/1|${origin}|${session.csrf}`).digest("base64url").slice(0, 22);
}

/** The socket's peer address (no header is read here). */
function peerAddress(c: Context): string | undefined {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress;
}

/** The context the gate app's routes share, over `store` (the per-request reading store). */
export function createGateContext(config: GateServerConfig, store: RunStore): GateContext {
  const home = store.home;
  const now = config.now ?? (() => new Date());
  const {
    sessions,
    decisions: pending,
    signins,
  }: ServerState = store.serverState ?? {
    sessions: new ReviewerSessions(),
    decisions: new PendingSignatures(),
    // Sealed in the browser's cookie: nothing is kept per anonymous start, so no flood pushes a reviewer's sign-in out.
    signins: new SealedSignins(),
  };
  const trustedProxies = new Set(config.trustedProxies ?? []);
  const origin = new URL(config.origin);
  const sessionCookie = sessionCookieName(config.tls);
  const requestOrigin = (c: Context): string => `${config.tls ? "https" : "http"}://${(c.req.header("host") ?? "").toLowerCase()}`;
  const ctx: GateContext = {
    config,
    store,
    home,
    now,
    sessions,
    pending,
    signins,
    rp: { id: origin.hostname, name: "twinlock", origin: origin.origin },
    secureCookie: config.tls,
    sessionCookie,
    clientOf: (c) => clientKey(clientAddress(peerAddress(c), c.req.header("x-forwarded-for"), trustedProxies)),
    requestOrigin,

    async identify(c) {
      const auth = c.req.header("authorization");
      if (auth !== undefined) {
        const m = /^Bearer (\S+)$/.exec(auth);
        if (!m) throw tokenProblem({ code: "BAD_TOKEN", missing: "token", reason: "no_bearer" });
        const verdict = verifyAgentToken(home, m[1] as string, now());
        if (!verdict.ok)
          throw tokenProblem({
            code: "BAD_TOKEN",
            missing: "token",
            reason: verdict.reason,
            ...(verdict.reason === "expired" ? { expired_at: verdict.expired_at } : {}),
          });
        return { kind: "agent", token: verdict.token };
      }
      const [id, tag] = (getCookie(c, sessionCookie) ?? "").split(".", 2);
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
    },

    layoutFor(c) {
      const p = c.get("principal");
      return {
        reviewer: p?.kind === "reviewer" ? p.session.reviewer : null,
        csrf: p?.kind === "reviewer" ? p.session.csrf : "",
        insecureHttp: config.insecureHttp,
      };
    },

    requireReader(c, scope, runId, planner) {
      const p = c.get("principal");
      if (p.kind === "reviewer") return p;
      if (p.kind === "anonymous") throw new HttpProblem(401, "SIGN_IN", "sign in with your passkey, or send an agent token");
      const t = p.token;
      if (!t.scopes.includes(scope)) throw tokenProblem({ code: "TOKEN_SCOPE", missing: "scope", scope, token_scopes: t.scopes.join(",") });
      // A CI token made for every run reads exports and nothing else (its scope was checked above).
      const anyRun = t.run_id === ANY_RUN && scope === "export";
      if (t.run_id !== runId && !anyRun) throw tokenProblem({ code: "TOKEN_RUN", missing: "run", run_id: runId, token_run: t.run_id });
      if (planner !== undefined && t.planner !== null && t.planner !== planner)
        throw tokenProblem({ code: "TOKEN_PAIR", missing: "pair", planner, token_planner: t.planner });
      return p;
    },

    async requireReviewer(c, fields, right) {
      const p = c.get("principal");
      if (p.kind === "agent")
        throw new HttpProblem(
          403,
          "AGENT_FORBIDDEN",
          "agent tokens cannot make human decisions (review, consent, apply approval, a verified close, stops); a person decides in the browser",
        );
      if (p.kind === "anonymous") throw new HttpProblem(401, "SIGN_IN", "sign in with your passkey first");
      const csrf = c.req.header("x-csrf-token") ?? (typeof fields.csrf === "string" ? fields.csrf : undefined);
      if (!sameToken(csrf, p.session.csrf))
        throw new HttpProblem(403, "CSRF", "the form's CSRF token is missing or stale; reload the page");
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
    },

    requireSignedInPage(c) {
      const p = c.get("principal");
      if (p.kind === "reviewer") return;
      if (p.kind === "agent") throw new HttpProblem(403, "AGENT_FORBIDDEN", "agent tokens cannot open the review pages; use the API");
      throw new HttpProblem(401, "SIGN_IN", "sign in with your passkey to see the runs");
    },

    async findRun(runId) {
      if (!RUN_ID_PATTERN.test(runId)) throw new HttpProblem(404, "UNKNOWN_RUN", `${JSON.stringify(runId.slice(0, 40))} is not a run ID`);
      const ref = await store.resolve(runId);
      if (ref === undefined) throw new HttpProblem(404, "UNKNOWN_RUN", `no run ${runId} in ${store.label}`);
      const run = await store.read(ref);
      // A run file swapped in under another run's checkpoint is not that run.
      if (run.state.run_id !== runId)
        throw new HttpProblem(409, "INTEGRITY", `the run file recorded for ${runId} now holds run ${run.state.run_id}`);
      return { ref, run };
    },

    actorOf(c) {
      const p = c.get("principal");
      return p.kind === "agent" ? `agent:${p.token.agent}` : p.kind === "reviewer" ? p.session.reviewer : "anonymous";
    },
  };
  return ctx;
}
