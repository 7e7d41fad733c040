import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type ServerWorld, TEST_HOST, TEST_ORIGIN } from "./gate-server-fixture.js";

/** The MCP SDK's own Streamable HTTP client, talking to the app in process (with the agent's token, or none). */
export async function mcpClientFor(w: ServerWorld, token: string | undefined): Promise<Client> {
  const fetchThroughApp = (async (url: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.set("host", TEST_HOST);
    return w.app.request(String(url instanceof Request ? url.url : url), { ...init, headers });
  }) as typeof fetch;
  const transport = new StreamableHTTPClientTransport(new URL(`${TEST_ORIGIN}/mcp`), {
    fetch: fetchThroughApp,
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
  });
  const client = new Client({ name: "twinlock-test", version: "1" });
  await client.connect(transport);
  return client;
}
