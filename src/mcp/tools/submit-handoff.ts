import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { freezePairHandoff } from "../../gate/freeze-pair-handoff.js";
import { FreezeRequest } from "../../server/api-schemas.js";
import { otherRunFolders } from "../../server/other-run-folders.js";
import { agentHandoffPath } from "../../store/run-store.js";
import type { TrustRemedy } from "../../trust/enforce-trust.js";
import { answer, type McpSession, plannerArg } from "../mcp-session.js";

/**
 * What an unsigned freeze refused through a planner's session server (plan's
 * relay, started with no key: none is ever given to the agent's side) says:
 * who can sign it instead, and how.
 */
function relayFreezeRemedy(run: string, planner: string, handoff: string): TrustRemedy {
  return (v) =>
    v.code === "unsigned"
      ? `this suite requires signed freezes, and plan's relay holds no freeze key, so the agent cannot freeze ${planner}'s handoff through it: the person who runs \`twinlock plan\` freezes it with \`twinlock freeze-pair-handoff ${run} ${planner} --handoff ${handoff} --key FILE\` (a key with the freeze right), or the planner freezes through the gate server with a token made with \`twinlock token create --freeze-key FILE\``
      : undefined;
}

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
          remedy:
            key === undefined && ctx.sessionHandoff !== undefined ? relayFreezeRemedy(ctx.ref, planner, ctx.sessionHandoff) : undefined,
        });
        const url = ctx.reviewUrl(planner, r.revision);
        return {
          text: `froze revision ${r.revision} of ${planner}: ${r.hash}; state ${r.workflow.state}. Ask a person to review it (twinlock_request_review).`,
          data: { hash: r.hash, revision: r.revision, state: r.workflow.state, review_url: url },
        };
      }),
  );
}
