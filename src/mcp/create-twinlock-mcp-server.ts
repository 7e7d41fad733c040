import "../schemas/zod-setup.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { VERSION } from "../version.js";
import { createMcpSession, type McpGateContext } from "./mcp-session.js";
import { registerExecutorPrompt } from "./resources/executor-prompt.js";
import { registerFrozenPlanResource } from "./resources/frozen-plan.js";
import { registerReceiptsResource } from "./resources/receipts.js";
import { registerCheckAdmissionTool } from "./tools/check-admission.js";
import { registerReadinessTool } from "./tools/readiness.js";
import { registerReportResultTool } from "./tools/report-result.js";
import { registerRequestReviewTool } from "./tools/request-review.js";
import { registerStatusTool } from "./tools/status.js";
import { registerSubmitHandoffTool } from "./tools/submit-handoff.js";
import { registerWaitForDecisionTool } from "./tools/wait-for-review.js";

export { answer, MCP_ERRORS, type McpGateContext, plannerArg } from "./mcp-session.js";

/**
 * The names of every tool the MCP server offers. None reviews, consents,
 * approves an apply, lifts a stop, pins, enrols or signs with a reviewer's
 * key: a test lists the server's tools and fails on any such capability.
 */
export const MCP_TOOLS = [
  "twinlock_status",
  "twinlock_readiness",
  "twinlock_submit_handoff",
  "twinlock_request_review",
  "twinlock_check_admission",
  "twinlock_report_result",
  "twinlock_wait_for_review",
] as const;

/**
 * An MCP server for the agent's side of the gate (SPEC §11), over whatever
 * transport the caller connects (stdio from `twinlock mcp`, Streamable HTTP
 * from `twinlock serve` with an agent token). Every tool calls the same
 * library function as the CLI and the JSON API, and answers with data plus
 * one line for the model; a refusal is a tool error with its stable code.
 */
export function createTwinlockMcpServer(ctx: McpGateContext): McpServer {
  const server = new McpServer(
    { name: "twinlock", version: VERSION },
    {
      instructions:
        "twinlock gates execution: freeze your plan (twinlock_submit_handoff), ask a person to review it (twinlock_request_review), and check whether the executor would be admitted (twinlock_check_admission). Only a person can review, approve and consent; no tool here can.",
    },
  );
  const session = createMcpSession(ctx);
  registerStatusTool(server, session);
  registerReadinessTool(server, session);
  registerSubmitHandoffTool(server, session);
  registerRequestReviewTool(server, session);
  registerCheckAdmissionTool(server, session);
  registerReportResultTool(server, session);
  registerWaitForDecisionTool(server, ctx, session.need);
  registerFrozenPlanResource(server, session);
  registerReceiptsResource(server, session);
  registerExecutorPrompt(server, session);
  return server;
}
