import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { RefusalError } from "../../errors/errors.js";
import { loadRunSuite } from "../../gate/load-run-suite.js";
import { type McpSession, redactedThrow } from "../mcp-session.js";

/** The `twinlock_executor` prompt: the text of exactly the executor a person consented to, or a refusal when no consent is live. */
export function registerExecutorPrompt(server: McpServer, session: McpSession): void {
  const { ctx, need, readOwnRun } = session;
  server.registerPrompt(
    "twinlock_executor",
    {
      title: "The consented executor",
      description:
        "The text of exactly the executor a person consented to, found by the file digest the consent bound; nothing when there is no live consent.",
      argsSchema: { executor: z.string().describe("the executor prompt's ID") },
    },
    async ({ executor }) =>
      redactedThrow(ctx, async () => {
        need("status");
        const run = await readOwnRun();
        const wf = Object.values(run.state.workflows).find((w) => w.executor === executor);
        need("status", wf?.planner);
        const consent = wf?.consents[wf.consents.length - 1];
        if (!wf || !consent || consent.decision !== "approved" || consent.handoff_hash !== wf.handoff?.hash)
          throw new RefusalError(`${executor} has no live consent in run ${ctx.runId}; a person consents first`, { code: "NO_CONSENT" });
        const pinned = loadRunSuite(ctx.store.home, run.state, wf);
        const prompt = pinned.suite.prompts.find((p) => p.id === executor && p.sha256 === consent.executor_digest);
        if (!prompt)
          throw new RefusalError(
            `the executor file the consent bound (${consent.executor_digest}) is not in the pinned suite any more; it changed since consent`,
            {
              code: "EXECUTOR_CHANGED",
            },
          );
        return {
          description: `${prompt.id} (${prompt.title ?? prompt.id}), the exact file consented to (${consent.executor_digest})`,
          messages: [{ role: "user" as const, content: { type: "text" as const, text: prompt.body } }],
        };
      }),
  );
}
