import { type ErrorCode, type ErrorKind, TwinlockError } from "../errors/errors.js";
import { type RedactedFolder, redactSecrets } from "../errors/redact-secrets.js";
import type { GateHome } from "../home/gate-home.js";

/** A refusal of the server itself (not signed in, wrong token scope, unknown run, too large): its status, code and message. */
export class HttpProblem extends Error {
  override name = "HttpProblem";
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 421 | 429 | 503,
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** What every error response carries: a stable code, one line for a person, and the error's data. */
export interface ProblemBody {
  ok: false;
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/**
 * One mapping from the library's errors to HTTP (hono's one `onError`): bad
 * input 400, a refusal or conflict 409 with the refusal's own code (e.g.
 * STALE_HASH, TRANSITION_REFUSED), a run whose integrity fails 409, and
 * anything else 500 with no internals.
 */
export function describeProblem(error: unknown): { status: number; body: ProblemBody } {
  if (error instanceof HttpProblem)
    return { status: error.status, body: { ok: false, code: error.code, message: error.message, details: error.details } };
  if (error instanceof TwinlockError) {
    const shown = HTTP_ERRORS[error.kind];
    return {
      status: shown.status,
      body: { ok: false, code: error.code, message: error.message, details: shown.details ? publicDetails(error.details) : {} },
    };
  }
  return {
    status: 500,
    body: { ok: false, code: "INTERNAL", message: "internal error; the server log has the details", details: {} },
  };
}

/** The server's one mapping from an error's kind (src/errors/error-codes.ts): its HTTP status, and whether the body shows its details. */
export const HTTP_ERRORS: Record<ErrorKind, { status: number; details: boolean }> = {
  usage: { status: 400, details: false },
  refused: { status: 409, details: true },
  conflict: { status: 409, details: false },
  unavailable: { status: 503, details: false },
  integrity: { status: 409, details: true },
  internal: { status: 500, details: false },
};

function publicDetails(details: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details)) if (v === null || ["string", "number", "boolean"].includes(typeof v)) out[k] = v;
  return out;
}

/**
 * The folders a message leaving the server names instead of spelling out:
 * the gate home (and, for a team store, the local copy's home), so no
 * caller learns where the server keeps its keys and tokens.
 */
export function homeFolders(home: GateHome): RedactedFolder[] {
  const dirs = [home.dir, home.shared?.homeDir].filter((d): d is string => typeof d === "string" && d.length > 1);
  // The longest first: a copy's folder inside the home is named as the home's, not cut in two.
  return [...new Set(dirs)].sort((a, b) => b.length - a.length).map((path) => ({ path, name: "the gate home" }));
}

/**
 * `describeProblem`, with every string that goes out redacted (store URLs,
 * key text, token secrets, the home's folders): what every answer of the
 * server and of the MCP tools carries.
 */
export function describePublicProblem(error: unknown, folders: readonly RedactedFolder[]): { status: number; body: ProblemBody } {
  const { status, body } = describeProblem(error);
  const details: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body.details)) details[k] = typeof v === "string" ? redactSecrets(v, { folders }) : v;
  return { status, body: { ...body, message: redactSecrets(body.message, { folders }), details } };
}
