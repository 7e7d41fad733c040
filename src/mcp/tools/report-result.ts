import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { closeWorkflow } from "../../gate/close-workflow.js";
import { ResultRequest } from "../../server/api-schemas.js";
import { answer, type McpSession, plannerArg } from "../mcp-session.js";

/** What the agent may report of its work: any ending but verified, which is a person's call on the executed change. */
const AgentResultReport = ResultRequest.extend({ result: z.enum(["failed", "rolled_back", "abandoned"]) });

/** `twinlock_report_result`: the agent's report that the work did not end as planned; never verified, which is a person's call. */
export function registerReportResultTool(server: McpServer, session: McpSession): void {
  const { ctx, need } = session;
  server.registerTool(
    "twinlock_report_result",
    {
      title: "Report the result",
      description:
        "Report that the work did not end as planned: failed or rolled_back after execution, abandoned or failed before it, with what was left undone. This is your report, recorded as a close made by you (the log names you), never as verified: verifying the work is a person's call on the executed change (`twinlock close RUN ID --result verified --git-range BASE...HEAD`). When the work is done, say so to the person and give them that command.",
      inputSchema: { planner: plannerArg, ...AgentResultReport.shape },
    },
    async ({ planner, result, residual }) =>
      answer(ctx, async () => {
        need("result", planner);
        const r = await closeWorkflow({ store: ctx.store, run: ctx.ref, planner, result, residual, actor: ctx.actor, report: true });
        return {
          text: `recorded your report: ${planner} closed ${result} by ${ctx.actor}; state ${r.workflow.state}`,
          data: { state: r.workflow.state, outcome: result, reported_by: ctx.actor },
        };
      }),
  );
}
