/**
 * What a gate server keeps between requests and a store holds for it: the
 * signed-in reviewers and the challenges waiting for a passkey. Declared
 * here, with the stores that keep them (src/store/run-store.ts), so store/
 * imports no server code; src/server/ implements them in memory.
 */

/**
 * A decision waiting for the reviewer's passkey: the receipt the gate
 * built (its signing hash is the WebAuthn challenge), the time it was built
 * at (the decision is re-run at that time, so the same receipt comes out),
 * and what was asked, so the signed answer can only complete that decision.
 */
export interface PendingSignature {
  id: string;
  reviewer: string;
  /** The route and form fields the challenge was made for, canonical. */
  request: string;
  challenge: Buffer;
  at: Date;
  expiresAt: number;
}

/**
 * Challenges waiting for a passkey (a decision's, or a sign-in's): in the
 * server's memory for the folder store, in the database for a team store
 * (the challenge may be answered through another server). Each is taken at
 * most once.
 */
export interface PendingStore {
  /** Hold a challenge for its reviewer. */
  add(entry: Omit<PendingSignature, "id" | "expiresAt">, now: number): Promise<PendingSignature>;
  /** Take (and forget) a waiting challenge; undefined when unknown, expired or already taken. */
  take(id: string, now: number): Promise<PendingSignature | undefined>;
}

/** A reviewer signed in with a passkey: who, with which rights, until when, and the CSRF token of the session. */
export interface ReviewerSession {
  id: string;
  reviewer: string;
  rights: readonly string[];
  csrf: string;
  expiresAt: number;
}

/**
 * Where signed-in reviewers are kept: in the server's memory for the gate
 * home's folder store, in the database for a team store (so every server
 * behind one URL knows every session).
 */
export interface SessionStore {
  /** Start a session for a reviewer whose passkey just verified. */
  open(reviewer: string, rights: readonly string[], now: number): Promise<ReviewerSession>;
  /** The live session a cookie names, if any. */
  find(id: string | undefined, now: number): Promise<ReviewerSession | undefined>;
  /** End a session (sign out). */
  close(id: string): Promise<void>;
  /** End every session of a reviewer (revoked). */
  closeReviewer(reviewer: string): Promise<void>;
}
