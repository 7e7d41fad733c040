/**
 * Why an agent token (or an MCP session) does not reach an operation, as
 * data: the code and what was missing (a live token, a scope, the run, the
 * pair). Each front end words it: the server and MCP here, saying what is
 * missing and who can grant it; the CLI in src/cli/word-token-refusal.ts,
 * which may name its own commands.
 */
import { RefusalError } from "../errors/errors.js";
import { HttpProblem } from "./http-problem.js";

/** A token refusal's data: its code and what the token lacked. */
export type TokenRefusal =
  | {
      code: "BAD_TOKEN";
      missing: "token";
      /** no_bearer: no `Bearer <token>` header; the others the token's own verdict. */
      reason: "no_bearer" | "malformed" | "unknown" | "revoked" | "expired";
      /** When an expired token expired. */
      expired_at?: string;
    }
  | { code: "TOKEN_SCOPE"; missing: "scope"; scope: string; token_scopes: string }
  | { code: "TOKEN_RUN"; missing: "run"; run_id: string; token_run: string }
  | { code: "TOKEN_PAIR"; missing: "pair"; planner: string; token_planner: string };

/** Whether a refusal's details are a token refusal's (what `tokenRefusalError` and `tokenProblem` carry). */
export function isTokenRefusal(details: Record<string, unknown>): details is TokenRefusal {
  const pairs: Record<string, string> = { BAD_TOKEN: "token", TOKEN_SCOPE: "scope", TOKEN_RUN: "run", TOKEN_PAIR: "pair" };
  return typeof details.code === "string" && Object.hasOwn(pairs, details.code) && pairs[details.code] === details.missing;
}

/** Who can grant what an agent lacks: never a command line, which is the CLI's word. */
const GRANTER = "a person who keeps the gate home";

/** The server's and MCP's words for a refusal: what is missing and who can grant it. `holder` names what was presented. */
export function wordTokenRefusal(r: TokenRefusal, holder: "agent token" | "session" = "agent token"): string {
  switch (r.code) {
    case "BAD_TOKEN":
      if (r.reason === "no_bearer") return "the Authorization header must be `Bearer <token>`";
      return `the token is ${r.reason}${r.expired_at ? ` (since ${r.expired_at})` : ""}; ${GRANTER} can give this agent a new one`;
    case "TOKEN_SCOPE":
      return `this ${holder} does not have the ${r.scope} scope (it has ${r.token_scopes || "none"}); ${GRANTER} can grant a token with it`;
    case "TOKEN_RUN":
      return `this ${holder} is for run ${r.token_run}, not ${r.run_id}; ${GRANTER} can grant a token for that run`;
    case "TOKEN_PAIR":
      return `this ${holder} is for ${r.token_planner}, not ${r.planner}; ${GRANTER} can grant a token for that pair`;
  }
}

/** The server's answer to a token refusal: 401 without a live token, 403 for one that does not reach the operation. */
export function tokenProblem(r: TokenRefusal): HttpProblem {
  return new HttpProblem(r.code === "BAD_TOKEN" ? 401 : 403, r.code, wordTokenRefusal(r), { ...r });
}

/** A token refusal as the library's error (MCP's sessions): its code and data, worded for the agent. */
export function tokenRefusalError(r: TokenRefusal, holder: "agent token" | "session" = "session"): RefusalError {
  return new RefusalError(wordTokenRefusal(r, holder), { ...r });
}
