import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { RefusalError } from "../../errors/errors.js";
import { shellQuote } from "../../run/next-step.js";
import { answer, type McpSession, plannerArg } from "../mcp-session.js";

/** `twinlock_request_review`: where a person reviews the current frozen revision. Read-only: only a person can review. */
export function registerRequestReviewTool(server: McpServer, session: McpSession): void {
  const { ctx, need, readOwnRun } = session;
  server.registerTool(
    "twinlock_request_review",
    {
      title: "Ask a person to review",
      description:
        "The review page of the current frozen revision and the exact command a person runs in a terminal. Only a person can review; this only tells you what to hand them.",
      inputSchema: { planner: plannerArg },
      annotations: { readOnlyHint: true },
    },
    async ({ planner }) =>
      answer(ctx, async () => {
        need("present", planner);
        const run = await readOwnRun();
        const wf = Object.hasOwn(run.state.workflows, planner) ? run.state.workflows[planner] : undefined;
        if (!wf?.handoff)
          throw new RefusalError(`${planner} has nothing frozen to review; freeze it first (twinlock_submit_handoff)`, {
            code: "NOT_FROZEN",
          });
        const url = ctx.reviewUrl(planner, wf.revision);
        const command = `twinlock present ${shellQuote(ctx.ref)} ${planner}   # then: twinlock review-pair-plan ${shellQuote(ctx.ref)} ${planner} --decision approved --handoff-hash ${wf.handoff.hash} --key FILE`;
        return {
          text: `Ask a person to review revision ${wf.revision} of ${planner} (${wf.handoff.hash})${url ? ` at ${url}` : ""}, or in a terminal: ${command}`,
          data: { revision: wf.revision, hash: wf.handoff.hash, review_url: url, command },
        };
      }),
  );
}
