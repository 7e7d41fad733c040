import { randomBytes, timingSafeEqual } from "node:crypto";

/** A reviewer signed in with a passkey: who, with which rights, until when, and the CSRF token of the session. */
export interface ReviewerSession {
  id: string;
  reviewer: string;
  rights: readonly string[];
  csrf: string;
  expiresAt: number;
}

/** How long a sign-in lasts; each decision is signed by the passkey again anyway. */
export const SESSION_MS = 8 * 60 * 60 * 1000;

/**
 * Signed-in reviewers, in memory: a restart signs everyone out, which is
 * the safe direction. Session IDs are 256 random bits, compared in constant
 * time, and never logged.
 */
export class ReviewerSessions {
  readonly #byId = new Map<string, ReviewerSession>();

  /** Start a session for a reviewer whose passkey just verified. */
  open(reviewer: string, rights: readonly string[], now: number): ReviewerSession {
    this.#sweep(now);
    const session = {
      id: randomBytes(32).toString("base64url"),
      reviewer,
      rights,
      csrf: randomBytes(32).toString("base64url"),
      expiresAt: now + SESSION_MS,
    };
    this.#byId.set(session.id, session);
    return session;
  }

  /** The live session a cookie names, if any. */
  find(id: string | undefined, now: number): ReviewerSession | undefined {
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
    const session = this.#byId.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= now) {
      this.#byId.delete(id);
      return undefined;
    }
    return session;
  }

  /** End a session (sign out). */
  close(id: string): void {
    this.#byId.delete(id);
  }

  /** End every session of a reviewer (revoked). */
  closeReviewer(reviewer: string): void {
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
