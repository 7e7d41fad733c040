/**
 * The few error classes twinlock throws. Each is a `TwinlockError`: a stable
 * `code` (src/errors/error-codes.ts), the `kind` every front end maps (the
 * CLI to the exit codes of SPEC §6, the server to an HTTP status, MCP to a
 * JSON-RPC error), typed `details` and the `cause` when wrapping; the CLI
 * prints `message` as one line.
 */
import type { ErrorCode, ErrorKind } from "./error-codes.js";

export type { ErrorCode, ErrorKind } from "./error-codes.js";

/** What every error class takes besides its message. */
export interface TwinlockErrorOptions {
  cause?: unknown;
  /** The refusal's own code; without it, the kind's default (BAD_INPUT, REFUSED…). */
  code?: ErrorCode;
}

/** The base of every twinlock error: a code, the kind the front ends map, the details, the cause. */
export abstract class TwinlockError extends Error {
  /** The kind of failure, which decides the exit code, HTTP status and MCP error. */
  abstract readonly kind: ErrorKind;
  /** Which refusal this is, stable across versions and front ends. */
  abstract readonly code: ErrorCode;
  /** Typed data about the refusal (what was given, what is current); never a command line. */
  abstract readonly details: Record<string, unknown>;
}

/** The code an error's details carried before codes were an option (`{ code: "STALE_HASH", … }`), else `fallback`. */
function codeOf(options: TwinlockErrorOptions | undefined, details: Record<string, unknown>, fallback: ErrorCode): ErrorCode {
  if (options?.code) return options.code;
  return typeof details.code === "string" ? (details.code as ErrorCode) : fallback;
}

/** Bad usage or unreadable input: exit 2. */
export class UsageError extends TwinlockError {
  override name = "UsageError";
  readonly kind = "usage" as const;
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> = {};
  constructor(message: string, options?: TwinlockErrorOptions) {
    super(message, options);
    this.code = options?.code ?? "BAD_INPUT";
  }
}

/** A command refused by the rules (illegal transition, wrong hash, wrong twin): exit 1. */
export class RefusalError extends TwinlockError {
  override name = "RefusalError";
  readonly kind = "refused" as const;
  readonly code: ErrorCode;
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: TwinlockErrorOptions,
  ) {
    super(message, options);
    this.code = codeOf(options, details, "REFUSED");
  }
}

/** Another writer changed the run file since it was read (stale compare-and-swap): exit 1. */
export class ConflictError extends TwinlockError {
  override name = "ConflictError";
  /** The store could not be reached or answer (not a decision's conflict): asking again later may work (a server says 503). */
  readonly retryable: boolean;
  readonly kind: "conflict" | "unavailable";
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> = {};
  constructor(message: string, options?: TwinlockErrorOptions & { retryable?: boolean }) {
    super(message, options);
    this.retryable = options?.retryable === true;
    this.kind = this.retryable ? "unavailable" : "conflict";
    this.code = options?.code ?? (this.retryable ? "UNAVAILABLE" : "CONFLICT");
  }
}

/** A run file or handoff whose integrity does not hold (chain broken, edited by hand): exit 1. */
export class IntegrityError extends TwinlockError {
  override name = "IntegrityError";
  readonly kind = "integrity" as const;
  readonly code: ErrorCode;
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: TwinlockErrorOptions,
  ) {
    super(message, options);
    this.code = codeOf(options, details, "INTEGRITY");
  }
}

/** Exit codes of SPEC §6. */
export const EXIT = { ok: 0, refused: 1, usage: 2, admissionStop: 3 } as const;
