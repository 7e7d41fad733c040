/**
 * The CLI's words for a token refusal (src/server/token-refusal.ts): what the
 * token lacks and the command a person runs to grant it. The server and MCP
 * say the same without a command line.
 */
import type { TokenRefusal } from "../server/token-refusal.js";

/** One line for a person at a terminal: what was missing, and the `twinlock token create` that grants it. */
export function wordTokenRefusalForCli(r: TokenRefusal): string {
  const create = "twinlock token create --run RUN_FILE --agent NAME";
  switch (r.code) {
    case "BAD_TOKEN":
      if (r.reason === "no_bearer") return `the request has no \`Authorization: Bearer <token>\` header; make a token with \`${create}\``;
      return `the token is ${r.reason}${r.expired_at ? ` (since ${r.expired_at})` : ""}; make a new one with \`${create}\` (or \`twinlock token create --ci\` for CI)`;
    case "TOKEN_SCOPE": {
      const scopes = [...new Set([...r.token_scopes.split(",").filter(Boolean), r.scope])].join(",");
      return `the token does not have the ${r.scope} scope (it has ${r.token_scopes || "none"}); make one that has it with \`${create} --scopes ${scopes}\``;
    }
    case "TOKEN_RUN":
      return `the token is for run ${r.token_run}, not ${r.run_id}; make one for that run with \`${create}\`, RUN_FILE being that run's file`;
    case "TOKEN_PAIR":
      return `the token is for ${r.token_planner}, not ${r.planner}; make one for that pair with \`${create} --planner ${r.planner}\``;
  }
}
