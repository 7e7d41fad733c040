import { UsageError } from "../errors/errors.js";
import type { RunState } from "../run/run-schema.js";
import { AGENT_SCOPES, EXECUTOR_SCOPES, type TokenScope } from "../server/agent-tokens.js";

/** The pair and the scopes of one stdio MCP session (`twinlock mcp`, or the relay exec and plan start for their agent). */
export interface McpSessionScope {
  planner: string | null;
  scopes: readonly TokenScope[];
}

/**
 * The scope `twinlock mcp` serves with: every agent scope (on one pair
 * with `planner`); with `executor`, that executor's own pair only
 * (`planner` names it, and the run must pair them) and EXECUTOR_SCOPES, so
 * an executor's agent may report its own result but freezes no pair and
 * closes no other.
 */
export function mcpSessionScope(state: Pick<RunState, "workflows">, o: { planner: string | null; executor?: string }): McpSessionScope {
  if (o.executor === undefined) return { planner: o.planner, scopes: AGENT_SCOPES };
  if (o.planner === null)
    throw new UsageError(
      `--executor ${o.executor} needs --planner, the planner of its pair, e.g. --planner MD-29 --executor ${o.executor}`,
    );
  const wf = Object.hasOwn(state.workflows, o.planner) ? state.workflows[o.planner] : undefined;
  if (wf?.executor !== o.executor)
    throw new UsageError(
      `${o.executor} is not the executor of ${o.planner}'s pair in this run${wf ? ` (its executor is ${wf.executor})` : ""}; give the pair's own planner and executor`,
    );
  return { planner: o.planner, scopes: EXECUTOR_SCOPES };
}
