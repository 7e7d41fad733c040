/**
 * The few error classes twinlock throws. Each carries data; the CLI maps
 * them to the exit codes of SPEC §6 and prints `message` as one line.
 */

/** Bad usage or unreadable input: exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A command refused by the rules (illegal transition, wrong hash, wrong twin): exit 1. */
export class RefusalError extends Error {
  override name = "RefusalError";
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Another writer changed the run file since it was read (stale compare-and-swap): exit 1. */
export class ConflictError extends Error {
  override name = "ConflictError";
  /** The store could not be reached or answer (not a decision's conflict): asking again later may work (a server says 503). */
  readonly retryable: boolean;
  constructor(message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message, options);
    this.retryable = options?.retryable === true;
  }
}

/** A run file or handoff whose integrity does not hold (chain broken, edited by hand): exit 1. */
export class IntegrityError extends Error {
  override name = "IntegrityError";
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Exit codes of SPEC §6. */
export const EXIT = { ok: 0, refused: 1, usage: 2, admissionStop: 3 } as const;
