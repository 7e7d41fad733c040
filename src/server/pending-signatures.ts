import { randomBytes } from "node:crypto";

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

/** How long a reviewer has to touch their passkey. */
export const PENDING_MS = 2 * 60 * 1000;
const MAX_PENDING = 1000;

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

/** A waiting challenge's ID: 128 random bits. */
export function newPendingId(): string {
  return randomBytes(16).toString("hex");
}

/** Decisions waiting for a passkey, in memory; each is taken at most once. */
export class PendingSignatures implements PendingStore {
  readonly #byId = new Map<string, PendingSignature>();

  /** Hold a built receipt's challenge for its reviewer. */
  async add(entry: Omit<PendingSignature, "id" | "expiresAt">, now: number): Promise<PendingSignature> {
    for (const [id, p] of this.#byId) if (p.expiresAt <= now) this.#byId.delete(id);
    // Bounded: the oldest waiting decision gives way (it must be asked again).
    if (this.#byId.size >= MAX_PENDING) this.#byId.delete(this.#byId.keys().next().value as string);
    const pending = { ...entry, id: newPendingId(), expiresAt: now + PENDING_MS };
    this.#byId.set(pending.id, pending);
    return pending;
  }

  /** Take (and forget) a waiting decision; undefined when unknown, expired or already taken. */
  async take(id: string, now: number): Promise<PendingSignature | undefined> {
    const pending = this.#byId.get(id);
    if (!pending) return undefined;
    this.#byId.delete(id);
    return pending.expiresAt > now ? pending : undefined;
  }
}
