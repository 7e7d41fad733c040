import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { PendingSignature, PendingStore } from "../store/server-state-types.js";

/** The types live with the store that keeps them (src/store/server-state-types.ts): store/ imports no server code. */
export type { PendingSignature, PendingStore };

/** How long a reviewer has to touch their passkey. */
export const PENDING_MS = 2 * 60 * 1000;

/** A waiting challenge's ID: 128 random bits. */
export function newPendingId(): string {
  return randomBytes(16).toString("hex");
}

/** How many decisions one reviewer may have waiting at once: her oldest gives way, never another reviewer's. */
export const MAX_PENDING_PER_REVIEWER = 32;

/**
 * Decisions waiting for a passkey, in memory; each is taken at most once.
 * Every reviewer has slots of her own: a reviewer with many decisions
 * waiting (or a flood of anything else) never pushes out another's.
 */
export class PendingSignatures implements PendingStore {
  readonly #byId = new Map<string, PendingSignature>();
  readonly #byReviewer = new Map<string, Set<string>>();

  /** Hold a built receipt's challenge for its reviewer. */
  async add(entry: Omit<PendingSignature, "id" | "expiresAt">, now: number): Promise<PendingSignature> {
    const mine = this.#byReviewer.get(entry.reviewer) ?? new Set<string>();
    this.#byReviewer.set(entry.reviewer, mine);
    for (const id of mine) if ((this.#byId.get(id)?.expiresAt ?? 0) <= now) this.#forget(id);
    // Bounded per reviewer: her own oldest waiting decision gives way (she asks again).
    while (mine.size >= MAX_PENDING_PER_REVIEWER) this.#forget(mine.values().next().value as string);
    const pending = { ...entry, id: newPendingId(), expiresAt: now + PENDING_MS };
    this.#byId.set(pending.id, pending);
    mine.add(pending.id);
    return pending;
  }

  /** Take (and forget) a waiting decision; undefined when unknown, expired or already taken. */
  async take(id: string, now: number): Promise<PendingSignature | undefined> {
    const pending = this.#byId.get(id);
    if (!pending) return undefined;
    this.#forget(id);
    return pending.expiresAt > now ? pending : undefined;
  }

  #forget(id: string): void {
    const pending = this.#byId.get(id);
    this.#byId.delete(id);
    if (!pending) return;
    const mine = this.#byReviewer.get(pending.reviewer);
    mine?.delete(id);
    if (mine?.size === 0) this.#byReviewer.delete(pending.reviewer);
  }
}

/** How many used sign-in challenges are remembered in memory (each only until it would have expired anyway). */
const MAX_USED_SIGNINS = 100_000;

/**
 * Where used sign-in seals are remembered until they would have expired:
 * this process's memory, or a team store's database, shared by every server
 * behind one URL (so a seal used through one server is refused by the others).
 */
export interface UsedSeals {
  /** Remember `mac` until `expiresAt`; false when it was remembered already (the seal was used before). */
  first(mac: string, expiresAt: number, now: number): Promise<boolean>;
}

/** Used seals in this process's memory, at most MAX_USED_SIGNINS (the oldest expired ones go first). */
export class UsedSealsInMemory implements UsedSeals {
  readonly #used = new Map<string, number>();

  async first(mac: string, expiresAt: number, now: number): Promise<boolean> {
    for (const [used, exp] of this.#used) {
      if (exp > now && this.#used.size < MAX_USED_SIGNINS) break;
      this.#used.delete(used);
    }
    if (this.#used.has(mac)) return false;
    this.#used.set(mac, expiresAt);
    return true;
  }
}

/**
 * Sign-ins waiting for a passkey, kept in the browser instead of the
 * server: `add` seals the challenge, its times and what it is for with an
 * HMAC and returns the seal as the ID (the sign-in cookie); `take` opens a
 * seal made under the same key, unexpired and not used before. Nothing is
 * stored per start, so no flood of anonymous starts can push a reviewer's
 * pending sign-in out; a used seal is remembered until it expires, so each
 * is taken at most once. The key is this process's own by default; a team
 * store gives every server the same key and one record of used seals.
 */
export class SealedSignins implements PendingStore {
  readonly #key: () => Promise<Buffer>;
  readonly #used: UsedSeals;

  constructor(options: { key?: () => Promise<Buffer>; used?: UsedSeals } = {}) {
    const own = randomBytes(32);
    this.#key = options.key ?? (async () => own);
    this.#used = options.used ?? new UsedSealsInMemory();
  }

  /** Seal a sign-in challenge; the returned ID is the whole seal. */
  async add(entry: Omit<PendingSignature, "id" | "expiresAt">, now: number): Promise<PendingSignature> {
    const expiresAt = now + PENDING_MS;
    const body = Buffer.from(
      JSON.stringify({
        c: entry.challenge.toString("base64url"),
        at: entry.at.getTime(),
        exp: expiresAt,
        r: entry.reviewer,
        q: entry.request,
      }),
    ).toString("base64url");
    return { ...entry, id: `${body}.${await this.#mac(body)}`, expiresAt };
  }

  /** Open a seal: undefined unless it was made under this key, it has not expired, and it was not taken before. */
  async take(id: string, now: number): Promise<PendingSignature | undefined> {
    if (id.length > 1024) return undefined;
    const dot = id.indexOf(".");
    if (dot < 0) return undefined;
    const body = id.slice(0, dot);
    const mac = id.slice(dot + 1);
    const given = Buffer.from(mac, "base64url");
    // Only the one spelling this server wrote: Node's base64url reader skips '=', stray characters and a last
    // character's spare bits, and a used seal is remembered by its spelling, so another spelling of it would be new.
    if (given.toString("base64url") !== mac) return undefined;
    const expected = Buffer.from(await this.#mac(body), "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let sealed: { c: string; at: number; exp: number; r: string; q: string };
    try {
      sealed = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    } catch {
      return undefined;
    }
    if (!(sealed.exp > now)) return undefined;
    if (!(await this.#used.first(mac, sealed.exp, now))) return undefined;
    return {
      id,
      reviewer: sealed.r,
      request: sealed.q,
      challenge: Buffer.from(sealed.c, "base64url"),
      at: new Date(sealed.at),
      expiresAt: sealed.exp,
    };
  }

  async #mac(body: string): Promise<string> {
    return createHmac("sha256", await this.#key())
      .update(`twinlock-signin/1|${body}`)
      .digest("base64url");
  }
}
