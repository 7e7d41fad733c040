import type { MiddlewareHandler } from "hono";
import { HttpProblem } from "./http-problem.js";

/** The Content-Security-Policy of every response: only this server's own scripts, styles and requests. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/**
 * Refuse a request whose `Host` is not one this server answers to (DNS
 * rebinding: a page on another site resolving its name to 127.0.0.1), and
 * a state-changing request from another origin (the `Origin` header, which
 * browsers always send on cross-origin and on POST fetches).
 */
export function guardHostAndOrigin(allowedHosts: ReadonlySet<string>, allowedOrigins: ReadonlySet<string>): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host")?.toLowerCase();
    if (!host || !allowedHosts.has(host))
      throw new HttpProblem(
        421,
        "WRONG_HOST",
        `this server does not answer to host ${JSON.stringify(host ?? "")}; open it at one of: ${[...allowedHosts].join(", ")}`,
      );
    const origin = c.req.header("origin");
    if (c.req.method !== "GET" && c.req.method !== "HEAD" && origin !== undefined && !allowedOrigins.has(origin))
      throw new HttpProblem(403, "WRONG_ORIGIN", `a request from ${JSON.stringify(origin)} may not change anything here`);
    await next();
  };
}

/** Security headers on every response; HSTS only when served over TLS. */
export function securityHeaders(tls: boolean): MiddlewareHandler {
  return async (c, next) => {
    await next();
    c.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
    c.header("Cross-Origin-Opener-Policy", "same-origin");
    c.header("Cross-Origin-Resource-Policy", "same-origin");
    c.header("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
    if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
    if (tls) c.header("Strict-Transport-Security", "max-age=31536000");
  };
}

/**
 * A small fixed-window limit per client address for one kind of request
 * (enrolment, sign-in): guessing invitation links or hammering the
 * passkey ceremony gets 429.
 */
export function rateLimit(kind: string, perMinute: number, clientOf: (c: Parameters<MiddlewareHandler>[0]) => string): MiddlewareHandler {
  const windows = new Map<string, { start: number; count: number }>();
  return async (c, next) => {
    const now = Date.now();
    const key = clientOf(c);
    const w = windows.get(key);
    if (!w || now - w.start >= 60_000) {
      if (windows.size > 10_000) windows.clear();
      windows.set(key, { start: now, count: 1 });
    } else if (++w.count > perMinute) {
      c.header("Retry-After", String(Math.ceil((w.start + 60_000 - now) / 1000)));
      throw new HttpProblem(429, "RATE_LIMITED", `too many ${kind} attempts from this address; wait a minute and try again`);
    }
    await next();
  };
}

/**
 * How many failed attempts of one kind (sign-in, enrolment) a client may
 * make a minute. Only failures count, and a request that succeeds is never
 * refused: a flood of bad attempts from the reviewer's own address (every
 * 127.x.y.z is one) slows the flood, never her passkey.
 */
export class FailureBudget {
  readonly #windows = new Map<string, { start: number; count: number }>();
  constructor(
    readonly kind: string,
    readonly perMinute: number,
  ) {}

  /** Count a failure of `key`; true when it is over the minute's budget (answer 429 instead of the failure). */
  fail(key: string, now: number): boolean {
    const w = this.#windows.get(key);
    if (!w || now - w.start >= 60_000) {
      if (this.#windows.size > 10_000) this.#windows.clear();
      this.#windows.set(key, { start: now, count: 1 });
      return false;
    }
    return ++w.count > this.perMinute;
  }

  /** Seconds until `key`'s window opens again. */
  retryAfter(key: string, now: number): number {
    const w = this.#windows.get(key);
    return w ? Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000)) : 1;
  }
}
