import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { UsageError } from "../../errors/errors.js";
import { parsePromptId } from "../../input/parse-input.js";
import { createTwinlockMcpServer } from "../../mcp/create-twinlock-mcp-server.js";
import { mcpSessionScope } from "../../mcp/mcp-session-scope.js";
import { wholeLines } from "../../mcp/whole-lines.js";
import { mcpRelayHere, relayStdio } from "../../sandbox/mcp-relay.js";
import { keyOption } from "../../trust/key-option.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";

/**
 * `twinlock mcp --run RUN`: the agent's MCP server over stdio, for one run.
 * It acts as the user who starts it (its gate home must be theirs); where
 * the agent must not reach the gate home, connect the agent to
 * `twinlock serve`'s `/mcp` endpoint with an agent token instead.
 */
export async function runMcp(
  o: CommonOptions & { run: string; planner?: string; executor?: string; handoff?: string; server?: string; actor?: string; key?: string },
): Promise<CommandResult> {
  // Under exec or plan (in the sandbox, or given the relay's socket): the session's own server outside answers, through its relay.
  const relay = mcpRelayHere();
  if (relay !== undefined) {
    await relayStdio(relay);
    return { exitCode: 0, text: "", json: { ok: true } };
  }
  const store = storeOption(o);
  const run = await store.read(o.run);
  const { planner, scopes } = mcpSessionScope(run.state, {
    planner: o.planner === undefined ? null : parsePromptId(o.planner, "--planner"),
    executor: o.executor === undefined ? undefined : parsePromptId(o.executor, "--executor"),
  });
  const origin = o.server?.replace(/\/+$/, "");
  const server = createTwinlockMcpServer({
    store,
    ref: o.run,
    runId: run.state.run_id,
    planner,
    scopes,
    actor: o.actor ?? "mcp-agent",
    sessionHandoff: o.handoff,
    // The planner's key signs freezes on suites that require signed receipts (--key, else TWINLOCK_KEY).
    freezeKey: keyOption(o.key),
    reviewUrl: (p, revision) =>
      origin ? `${origin}/runs/${encodeURIComponent(run.state.run_id)}/pairs/${encodeURIComponent(p)}/revisions/${revision}` : null,
  });
  // The SDK closes the session on a message over its buffer (10 MiB); twinlock counts the bytes first, so a long line
  // costs time in proportion to its length (the SDK's reader is quadratic in it), and says so with exit 2, not 0 in silence.
  let overLimit = false;
  const lines = process.stdin.pipe(
    wholeLines(STDIO_DEFAULT_MAX_BUFFER_SIZE, () => {
      overLimit = true;
      process.stdin.unpipe(lines);
      process.stdin.pause();
    }),
  );
  const transport = new StdioServerTransport(lines, process.stdout);
  server.server.onerror = (error) => {
    if (/ReadBuffer exceeded/.test(error.message)) overLimit = true;
  };
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    lines.once("end", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
  if (overLimit)
    throw new UsageError(
      `a message from the agent was over the ${STDIO_DEFAULT_MAX_BUFFER_SIZE.toLocaleString("en-US")}-byte limit for one MCP message over stdio, so the session is closed; send large content as files in the handoff folder`,
    );
  return { exitCode: 0, text: "", json: { ok: true } };
}
