import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { heldReceipts, RECEIPT_ROWS } from "../../run/receipt-kinds.js";
import type { RunState } from "../../run/run-schema.js";
import { tokenRefusalError } from "../../server/token-refusal.js";
import { type McpSession, redactedThrow } from "../mcp-session.js";

/** The receipts resource: each pair (all, or only `planner`'s) with its receipts under the field RECEIPT_KINDS names, the run's stop lifts on every pair. */
export function receiptsByPair(state: RunState, planner: string | null): Array<Record<string, unknown>> {
  const held = heldReceipts(state);
  return Object.values(state.workflows)
    .filter((w) => planner === null || w.planner === planner)
    .map((w) => {
      const pair: Record<string, unknown> = { planner: w.planner, executor: w.executor };
      for (const row of RECEIPT_ROWS) {
        const { field, many } = row.mcp;
        const mine = held.filter(
          (h) => h.row.kind === row.kind && (h.planner === w.planner || (h.planner === null && row.kind === "stop_resolution")),
        );
        // The consent as replay keeps it, with the home's consumed_at (what this resource always showed).
        const shown = row.kind === "consent" ? w.consents : mine.map((h) => h.receipt);
        pair[field] = many ? shown : (shown[shown.length - 1] ?? null);
      }
      return pair;
    });
}

/** The receipts resource, `twinlock://runs/{runId}/receipts`: the session's pairs with their receipts, as JSON. */
export function registerReceiptsResource(server: McpServer, session: McpSession): void {
  const { ctx, need, readOwnRun } = session;
  server.registerResource(
    "receipts",
    new ResourceTemplate("twinlock://runs/{runId}/receipts", { list: undefined }),
    {
      title: "Receipts",
      description:
        "Every receipt of the run, pair by pair (the freeze, reviews, consents, apply approvals, dry-run results, admissions and stop lifts), as JSON",
      mimeType: "application/json",
    },
    async (uri, vars) =>
      redactedThrow(ctx, async () => {
        need("status");
        if (vars.runId !== ctx.runId)
          throw tokenRefusalError({ code: "TOKEN_RUN", missing: "run", run_id: String(vars.runId).slice(0, 40), token_run: ctx.runId });
        const run = await readOwnRun();
        const receipts = receiptsByPair(run.state, ctx.planner);
        return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(receipts, null, 1) }] };
      }),
  );
}
