import { realpathSync } from "node:fs";
import { type McpRelay, startMcpRelay } from "../sandbox/mcp-relay.js";

/** Who the session's agent is: an executor of `planner`'s pair (exec), or that pair's planner (plan). */
export type SessionRole = { planner: string; executor?: string; handoff?: string };

/**
 * The MCP server the session's relay starts for its agent: this
 * twinlock's own `mcp` for the run, in the gate home, with no argument of
 * the agent's, scoped to the session's pair (`--planner`) and, for an
 * executor, to what an executor may do (`--executor`: no freeze, no other
 * pair; a planner freezes only its bound handoff folder). No store URL among the arguments: they are readable by every user.
 */
export function sessionMcpCommand(runRef: string, home: string, role: SessionRole): string[] {
  const entry = process.argv[1] ? realpathSync(process.argv[1]) : "twinlock";
  return [
    process.execPath,
    entry,
    "mcp",
    "--run",
    runRef,
    "--home",
    home,
    "--planner",
    role.planner,
    ...(role.executor ? ["--executor", role.executor] : []),
    ...(role.handoff ? ["--handoff", role.handoff] : []),
  ];
}

/**
 * Start the session's MCP relay (exec and plan, always): the agent's
 * `twinlock mcp` reaches the session's own server through it, never one of
 * its own choosing. The server runs here, outside any sandbox, as the
 * person who started the session: with the agent's environment (never
 * TWINLOCK_KEY) plus, on a team store, the store's URL, which the agent's
 * environment never holds. An agent outside a sandbox is told the socket in
 * TWINLOCK_MCP_SOCKET (set on `agentEnv`); in the sandbox it is mounted
 * where `twinlock mcp` looks (SANDBOX_MCP_SOCKET).
 */
export async function startSessionMcpRelay(o: {
  runRef: string;
  home: string;
  role: SessionRole;
  agentEnv: NodeJS.ProcessEnv;
  storeUrl: string | undefined;
  sandboxed: boolean;
}): Promise<McpRelay> {
  const serverEnv: NodeJS.ProcessEnv = { ...o.agentEnv };
  // The relayed server must serve, not relay again to itself.
  delete serverEnv.TWINLOCK_MCP_SOCKET;
  if (o.storeUrl !== undefined) Object.assign(serverEnv, { TWINLOCK_STORE: o.storeUrl, TWINLOCK_STORE_POOL: "2" });
  const relay = await startMcpRelay(sessionMcpCommand(o.runRef, o.home, o.role), serverEnv);
  if (!o.sandboxed) o.agentEnv.TWINLOCK_MCP_SOCKET = relay.socket;
  return relay;
}
