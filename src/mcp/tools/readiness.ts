import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { UsageError } from "../../errors/errors.js";
import { loadPinnedPolicy } from "../../home/suite-pins.js";
import { FreezeRequest } from "../../server/api-schemas.js";
import { otherRunFolders } from "../../server/other-run-folders.js";
import { agentHandoffPath } from "../../store/run-store.js";
import { liveHandoffReadiness } from "../live-handoff-source.js";
import { answer, type McpSession, plannerArg } from "../mcp-session.js";

/** `twinlock_readiness`: the live handoff folder judged against the pinned suite's handoff format, before freezing. Read-only. */
export function registerReadinessTool(server: McpServer, session: McpSession): void {
  const { ctx, need, readOwnRun } = session;
  server.registerTool(
    "twinlock_readiness",
    {
      title: "Handoff readiness",
      description:
        "Check the live handoff folder against the pinned suite's handoff format before freezing: every problem, by file and record. Read-only.",
      inputSchema: { planner: plannerArg, handoff_dir: FreezeRequest.shape.handoff_dir },
      annotations: { readOnlyHint: true },
    },
    async ({ planner, handoff_dir }) =>
      answer(ctx, async () => {
        need("status", planner);
        const run = await readOwnRun();
        const wf = Object.hasOwn(run.state.workflows, planner) ? run.state.workflows[planner] : undefined;
        if (!(handoff_dir ?? wf?.handoff?.dir))
          throw new UsageError(`give handoff_dir: ${planner} has no frozen handoff yet to take the folder from`);
        const policy = loadPinnedPolicy(ctx.store.home, run.state.suite);
        const handoff = agentHandoffPath(ctx.store, ctx.ref, handoff_dir, {
          runId: run.state.run_id,
          frozenBefore: wf?.handoff?.dir,
          suiteRoot: run.state.suite.root,
          handoffRoot: ctx.handoffRoot,
          otherRunFolders: await otherRunFolders(ctx.store, ctx.ref),
        });
        // Judged in place, not on a copy: the real path is resolved and confined once, and every file is read beneath
        // it on a worker thread, so a link swapped in meanwhile leads nowhere and no handoff holds the server.
        const report = await liveHandoffReadiness(ctx.store.home, handoff.dir, handoff.confine, policy.handoffFormat);
        return {
          text: report.ready
            ? `ready: ${report.dir}`
            : `not ready (${report.problems.length} problems): ${report.problems
                .slice(0, 10)
                .map((p) => `${p.file}: ${p.message}`)
                .join("; ")}`,
          data: { ready: report.ready, problems: report.problems },
        };
      }),
  );
}
