/**
 * Every code a twinlock error carries, with the kind of error it is. The
 * kind decides how each front end answers (src/cli/main.ts: the exit code;
 * src/server/http-problem.ts: the HTTP status; src/mcp: the JSON-RPC error);
 * the code says which refusal it is, so a front end can word it and a client
 * can act on it. docs/reference.md ("Error codes") lists every one, held to
 * this table by src/errors/error-codes.test.ts.
 */

/** What kind of failure an error is: each front end maps a kind, not a class. */
export const ERROR_KINDS = ["usage", "refused", "conflict", "unavailable", "integrity", "internal"] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** Every error code and its kind. A code the server alone answers with carries its own HTTP status too (HttpProblem). */
export const ERROR_CODES = {
  // The defaults of each kind, for an error that names no code of its own.
  BAD_INPUT: "usage",
  REFUSED: "refused",
  CONFLICT: "conflict",
  UNAVAILABLE: "unavailable",
  INTEGRITY: "integrity",
  INTERNAL: "internal",
  // Refusals of the rules.
  TRANSITION_REFUSED: "refused",
  STALE_HASH: "refused",
  STALE_DECISION: "refused",
  EXECUTOR_CHANGED: "refused",
  SCOPE_NOT_IN_PLAN: "refused",
  NOT_FROZEN: "refused",
  NO_CONSENT: "refused",
  NO_SUCH_STOP: "refused",
  STOPS_AMBIGUOUS: "refused",
  TOO_MANY_STOPS: "refused",
  UNKNOWN_PAIR: "refused",
  UNKNOWN_REVISION: "refused",
  NO_OPEN_DRY_RUN: "refused",
  UNTRUSTED_RECEIPT: "refused",
  SEPARATE_DUTIES: "refused",
  // The gate home's refusals (src/home).
  QUOTA_EXCEEDED: "refused",
  OVER_BUDGET: "refused",
  BAD_HANDOFF_FILE: "refused",
  DISK_FULL: "refused",
  NOT_PINNED: "refused",
  SUITE_CHANGED: "refused",
  SUITE_INVALID: "refused",
  UNSIGNED_SUITE: "refused",
  NOT_PINNER: "refused",
  RUN_EXISTS: "refused",
  LOCKED: "unavailable",
  OTHER_HOME: "integrity",
  CHECKPOINT_MISMATCH: "integrity",
  HOME_DAMAGED: "integrity",
  FROZEN_DAMAGED: "integrity",
  HOME_UNREADABLE: "usage",
  SETTINGS_INVALID: "usage",
  NO_RUN_FILE: "usage",
  // An agent token's or session's reach.
  TOKEN_SCOPE: "refused",
  TOKEN_PAIR: "refused",
  TOKEN_RUN: "refused",
  // The server's own refusals (HttpProblem, with their own status).
  AGENT_TOKEN: "refused",
  BAD_TOKEN: "refused",
  AGENT_FORBIDDEN: "refused",
  SIGN_IN: "refused",
  CSRF: "refused",
  WRONG_ORIGIN: "refused",
  NOT_ENROLLED: "refused",
  UNKNOWN_PASSKEY: "refused",
  BAD_ASSERTION: "refused",
  CHALLENGE_EXPIRED: "refused",
  NO_RIGHT: "refused",
  UNKNOWN_INVITATION: "refused",
  SETTINGS_DIFFER: "refused",
  WRONG_HOST: "refused",
  NOT_FOUND: "usage",
  UNKNOWN_RUN: "usage",
  TOO_LARGE: "usage",
  RATE_LIMITED: "unavailable",
  NOT_READY: "unavailable",
} as const satisfies Record<string, ErrorKind>;

/** A twinlock error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Whether a string is one of the error codes (own keys only: `constructor` is none). */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CODES, value);
}
