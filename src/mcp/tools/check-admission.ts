import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { admit } from "../../gate/admit.js";
import { AdmissionCheckRequest } from "../../server/api-schemas.js";
import { answer, type McpSession, promptIdArg } from "../mcp-session.js";

/** `twinlock_check_admission`: every admission check for the executor, now, recording nothing. Read-only. */
export function registerCheckAdmissionTool(server: McpServer, session: McpSession): void {
  const { ctx, need, readOwnRun } = session;
  server.registerTool(
    "twinlock_check_admission",
    {
      title: "Would the executor be admitted?",
      description: "Every admission check for the executor, now, without recording anything or using the consent.",
      inputSchema: { executor: promptIdArg("the executor prompt's ID (e.g. MD-30)"), ...AdmissionCheckRequest.shape },
      annotations: { readOnlyHint: true },
    },
    async ({ executor, planner, mode, environment, actions }) =>
      answer(ctx, async () => {
        // The scope before the run is read; the pair once the run says whose executor this is.
        need("admission_check");
        const run = await readOwnRun();
        const wf = Object.values(run.state.workflows).find((w) => w.executor === executor);
        need("admission_check", wf?.planner ?? planner);
        const r = await admit({
          store: ctx.store,
          run: ctx.ref,
          executor,
          planner,
          mode,
          environment,
          actions,
          dry: true,
          actor: ctx.actor,
        });
        const failed = r.checks.filter((c) => !c.ok);
        return {
          text: r.admitted
            ? `${executor} would be admitted (every check passes)`
            : `${executor} would NOT be admitted: ${failed.map((c) => `${c.name}: ${c.detail}`).join("; ")}`,
          data: { would_admit: r.admitted, checks: r.checks, unsigned: r.unsigned },
        };
      }),
  );
}
