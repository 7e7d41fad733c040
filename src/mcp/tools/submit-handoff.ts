import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { freezePairHandoff } from "../../gate/freeze-pair-handoff.js";
import { FreezeRequest } from "../../server/api-schemas.js";
import { otherRunFolders } from "../../server/other-run-folders.js";
import { agentHandoffPath } from "../../store/run-store.js";
import { answer, type McpSession, plannerArg } from "../mcp-session.js";

/** `twinlock_submit_handoff`: freeze the planner's handoff folder, bounded to the folder named or the one frozen before. */
export function registerSubmitHandoffTool(server: McpServer, session: McpSession): void {
  const { ctx, need, readOwnRun } = session;
  server.registerTool(
    "twinlock_submit_handoff",
    {
      title: "Freeze the handoff",
      description:
        "Freeze the planner's handoff folder (a relative handoff_dir is taken from the run file's folder): the gate copies and hashes every file; the reviewer is shown exactly these bytes. Returns the hash and revision.",
      inputSchema: { planner: plannerArg, ...FreezeRequest.shape },
    },
    async ({ planner, handoff_dir, unchanged_because }) =>
      answer(ctx, async () => {
        need("freeze", planner);
        const current = await readOwnRun();
        // Every freeze is bounded, the folder named or the one frozen before (re-resolved, it could lead elsewhere now).
        const handoff = agentHandoffPath(ctx.store, ctx.ref, handoff_dir, {
          runId: current.state.run_id,
          frozenBefore: Object.hasOwn(current.state.workflows, planner) ? current.state.workflows[planner]?.handoff?.dir : undefined,
          suiteRoot: current.state.suite.root,
          handoffRoot: ctx.handoffRoot,
          sessionHandoff: ctx.sessionHandoff,
          otherRunFolders: await otherRunFolders(ctx.store, ctx.ref),
        });
        const key = ctx.freezeKey;
        const r = await freezePairHandoff({
          store: ctx.store,
          run: ctx.ref,
          planner,
          handoffDir: handoff.dir,
          confine: handoff.confine,
          actor: key ? undefined : ctx.actor,
          key,
          unchangedBecause: unchanged_because,
        });
        const url = ctx.reviewUrl(planner, r.revision);
        return {
          text: `froze revision ${r.revision} of ${planner}: ${r.hash}; state ${r.workflow.state}. Ask a person to review it (twinlock_request_review).`,
          data: { hash: r.hash, revision: r.revision, state: r.workflow.state, review_url: url },
        };
      }),
  );
}
