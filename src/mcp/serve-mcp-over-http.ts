import type { KeyObject } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { AgentToken } from "../server/agent-tokens.js";
import type { RunStore } from "../store/run-store.js";
import { createTwinlockMcpServer } from "./create-twinlock-mcp-server.js";

/**
 * Answer one MCP request over Streamable HTTP for an agent's token
 * (stateless: a server and a transport per request, JSON responses). The
 * session reaches exactly the token's run, pair and scopes.
 */
export async function serveMcpOverHttp(
  request: Request,
  context: {
    store: RunStore;
    /** The store without the once-per-request reads, for a long wait's re-reads. */
    waitStore?: RunStore;
    token: AgentToken;
    ref: string;
    origin: string;
    freezeKey: KeyObject | undefined;
    handoffRoot?: string;
  },
): Promise<Response> {
  const { token } = context;
  const server = createTwinlockMcpServer({
    store: context.store,
    waitStore: context.waitStore,
    ref: context.ref,
    runId: token.run_id,
    planner: token.planner,
    scopes: token.scopes,
    actor: `agent:${token.agent}`,
    freezeKey: context.freezeKey,
    handoffRoot: context.handoffRoot,
    reviewUrl: (planner, revision) =>
      `${context.origin}/runs/${encodeURIComponent(token.run_id)}/pairs/${encodeURIComponent(planner)}/revisions/${revision}`,
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request);
  } finally {
    await server.close();
  }
}
