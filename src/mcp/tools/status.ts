import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { pairStatusFromRun } from "../../gate/pair-status.js";
import { answer, type McpSession, plannerArg } from "../mcp-session.js";

/** `twinlock_status`: the state of one pair of the run, or every pair the session may see. Read-only. */
export function registerStatusTool(server: McpServer, session: McpSession): void {
  const { ctx, need, readOwnRun } = session;
  server.registerTool(
    "twinlock_status",
    {
      title: "Pair status",
      description: "The state of one pair of the run (or every pair): revision, frozen hash, the next step, open stops. Read-only.",
      inputSchema: { planner: z.optional(plannerArg) },
      annotations: { readOnlyHint: true },
    },
    async ({ planner }) =>
      answer(ctx, async () => {
        need("status", planner);
        const run = await readOwnRun();
        const planners = planner ? [planner] : Object.keys(run.state.workflows).filter((p) => ctx.planner === null || p === ctx.planner);
        const statuses = [];
        for (const p of planners) statuses.push(await pairStatusFromRun(ctx.store, ctx.ref, p, new Date(), run));
        return {
          text: statuses.map((s) => `${s.planner}→${s.executor}: ${s.state}, revision ${s.revision}; next: ${s.next_action}`).join("\n"),
          data: { statuses },
        };
      }),
  );
}
