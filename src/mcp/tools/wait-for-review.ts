import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { ReviewComment } from "../../gate/review-comments.js";
import { MAX_WAIT_MS, waitForDecision } from "../../gate/wait-for-decision.js";
import type { TokenScope } from "../../server/agent-tokens.js";
import { answer, type McpGateContext, plannerArg } from "../mcp-session.js";

/** The comments as lines, one per item (the data carries them as a list too). */
function describeComments(comments: readonly ReviewComment[]): string {
  return comments.length === 0 ? "" : `; comments by item:\n${comments.map((c) => `- ${c.item} (${c.kind}): ${c.text}`).join("\n")}\n`;
}

/**
 * `twinlock_wait_for_review`: the agent's long poll for a person's
 * decision on its frozen plan (issue 27), instead of calling status in a
 * loop. Read-only: it waits for a decision, it never makes one.
 */
export function registerWaitForDecisionTool(
  server: McpServer,
  ctx: McpGateContext,
  need: (scope: TokenScope, planner?: string) => void,
): void {
  server.registerTool(
    "twinlock_wait_for_review",
    {
      title: "Wait for the reviewer's decision",
      description: `Wait (up to timeout_seconds, at most ${MAX_WAIT_MS / 1000}) for a person's decision on the plan revision you froze: returns approved, changes_requested (with the reviewer's feedback and comments by item: record ID or PATH:LINE) or declined, or status "waiting" when the time ran out — then call it again. Read-only.`,
      inputSchema: {
        planner: plannerArg,
        revision: z.optional(z.number().int().min(1).describe("the revision you froze (default: the pair's current revision)")),
        timeout_seconds: z.optional(
          z
            .number()
            .int()
            .min(1)
            .max(MAX_WAIT_MS / 1000)
            .describe("how long to wait (default 50)"),
        ),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ planner, revision, timeout_seconds }, extra) =>
      answer(ctx, async () => {
        need("status", planner);
        const store = ctx.waitStore ?? ctx.store;
        const current = await store.read(ctx.ref);
        const wf = Object.hasOwn(current.state.workflows, planner) ? current.state.workflows[planner] : undefined;
        const since = revision ?? Math.max(wf?.revision ?? 1, 1);
        const r = await waitForDecision(store, ctx.ref, planner, since, extra.signal, {
          timeoutMs: (timeout_seconds ?? 50) * 1000,
        });
        const stops = r.stops.length > 0 ? `; open stops: ${r.stops.map((s) => `!STOP:${s.reason} (${s.seq})`).join(", ")}` : "";
        const text =
          r.status === "decided"
            ? `${r.decision.decision} on revision ${r.decision.revision} by ${r.decision.reviewer}${r.decision.feedback ? `; feedback: ${r.decision.feedback}` : ""}${describeComments(r.decision.comments)}; state ${r.state}${stops}`
            : r.status === "finished"
              ? `${planner} is ${r.state}: there is no decision to wait for${stops}`
              : `no decision yet on revision ${since} (state ${r.state}); call twinlock_wait_for_review again${stops}`;
        return { text, data: { ...r, review_url: ctx.reviewUrl(planner, since) } };
      }),
  );
}
