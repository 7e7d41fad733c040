import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { presentPlan } from "../../gate/present-plan.js";
import { tokenRefusalError } from "../../server/token-refusal.js";
import { type McpSession, redactedThrow } from "../mcp-session.js";

/** The frozen-plan resource: a revision's plan as the reviewer sees it, from the frozen bytes. */
export function registerFrozenPlanResource(server: McpServer, session: McpSession): void {
  const { ctx, need } = session;
  server.registerResource(
    "frozen-plan",
    new ResourceTemplate("twinlock://runs/{runId}/pairs/{planner}/revisions/{revision}/plan", { list: undefined }),
    { title: "Frozen plan", description: "A revision's plan as the reviewer sees it, from the frozen bytes", mimeType: "text/markdown" },
    async (uri, vars) =>
      redactedThrow(ctx, async () => {
        const planner = String(vars.planner);
        need("present", planner);
        if (vars.runId !== ctx.runId)
          throw tokenRefusalError({ code: "TOKEN_RUN", missing: "run", run_id: String(vars.runId).slice(0, 40), token_run: ctx.runId });
        const p = await presentPlan(ctx.store, ctx.ref, planner, { revision: Number(vars.revision) });
        return { contents: [{ uri: uri.href, mimeType: "text/markdown", text: p.markdown }] };
      }),
  );
}
