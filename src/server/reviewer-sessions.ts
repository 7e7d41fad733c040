import { randomBytes, timingSafeEqual } from "node:crypto";
import type { ReviewerSession, SessionStore } from "../store/server-state-types.js";

/** The types live with the store that keeps them (src/store/server-state-types.ts): store/ imports no server code. */
export type { ReviewerSession, SessionStore };

/** How long a sign-in lasts; each decision is signed by the passkey again anyway. */
export const SESSION_MS = 8 * 60 * 60 * 1000;

/** A new session's secrets: an ID and a CSRF token of 256 random bits each. */
export function newSession(reviewer: string, rights: readonly string[], now: number): ReviewerSession {
  return {
    id: randomBytes(32).toString("base64url"),
    reviewer,
    rights,
    csrf: randomBytes(32).toString("base64url"),
    expiresAt: now + SESSION_MS,
  };
}

/** Whether a cookie's value can be a session ID at all (checked before any lookup). */
export function isSessionId(id: string | undefined): id is string {
  return id !== undefined && /^[A-Za-z0-9_-]{43}$/.test(id);
}

/**
 * Signed-in reviewers, in memory: a restart signs everyone out, which is
 * the safe direction. Session IDs are 256 random bits, compared in constant
 * time, and never logged.
 */
export class ReviewerSessions implements SessionStore {
  readonly #byId = new Map<string, ReviewerSession>();

  /** Start a session for a reviewer whose passkey just verified. */
  async open(reviewer: string, rights: readonly string[], now: number): Promise<ReviewerSession> {
    this.#sweep(now);
    const session = newSession(reviewer, rights, now);
    this.#byId.set(session.id, session);
    return session;
  }

  /** The live session a cookie names, if any. */
  async find(id: string | undefined, now: number): Promise<ReviewerSession | undefined> {
    if (!isSessionId(id)) return undefined;
    const session = this.#byId.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= now) {
      this.#byId.delete(id);
      return undefined;
    }
    return session;
  }

  /** End a session (sign out). */
  async close(id: string): Promise<void> {
    this.#byId.delete(id);
  }

  /** End every session of a reviewer (revoked). */
  async closeReviewer(reviewer: string): Promise<void> {
    for (const [id, s] of this.#byId) if (s.reviewer === reviewer) this.#byId.delete(id);
  }

  #sweep(now: number): void {
    for (const [id, s] of this.#byId) if (s.expiresAt <= now) this.#byId.delete(id);
  }
}

/** Constant-time equality of two tokens (a CSRF token against the session's). */
export function sameToken(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
