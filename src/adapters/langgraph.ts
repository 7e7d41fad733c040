/**
 * `twinlock/langgraph`: the gate inside LangGraph.js (`@langchain/langgraph`
 * 1.7 with `@langchain/core` 1.4). Each LangChain tool of the executor's
 * agent is wrapped in a tool of the same name and schema that runs the
 * original only when the gate allows the call; a denied call answers the
 * model (through ToolNode's ToolMessage) with the reason instead. The planner
 * gets two tools: freeze the handoff, and wait for a person's review.
 * Nothing here resumes an `interrupt()` for the person, reviews or consents.
 */
import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { z } from "zod";
import { type ExecutorGateOptions, executorGate } from "./executor-gate.js";
import { type PlannerSessionOptions, plannerSession, refusalText } from "./planner-session.js";

export type { ExecutorGateOptions, ToolScope } from "./executor-gate.js";
export type { PlannerSessionOptions, ReviewOutcome } from "./planner-session.js";

/** `tools`, each behind the executor's gate: same name, description and schema; the original runs only on an allowed call. */
export function gateLangChainTools(
  tools: readonly StructuredToolInterface[],
  options: Omit<ExecutorGateOptions, "tools"> & { scopes: ExecutorGateOptions["tools"] },
): StructuredToolInterface[] {
  const gate = executorGate({ ...options, tools: options.scopes });
  return tools.map((t) =>
    tool(
      async (input: unknown, config) => {
        const j = gate.judge(t.name, input);
        if (!j.allow) return j.reason;
        return t.invoke(input as never, config);
      },
      // biome-ignore lint/suspicious/noExplicitAny: the original's own schema, whatever kind it is.
      { name: t.name, description: t.description, schema: t.schema as any },
    ),
  );
}

/** The planner's tools: `twinlock_submit_handoff` (freeze) and `twinlock_request_review` (wait for a person's decision). */
export function plannerLangChainTools(options: PlannerSessionOptions): StructuredToolInterface[] {
  const session = plannerSession(options);
  return [
    tool(
      async ({ unchanged_because }) => {
        try {
          return JSON.stringify(await session.submitHandoff({ unchangedBecause: unchanged_because }));
        } catch (error) {
          return refusalText(error);
        }
      },
      {
        name: "twinlock_submit_handoff",
        description:
          "Freeze your handoff folder: the gate copies and hashes every file, and a person reviews exactly these bytes. Returns the hash and revision.",
        schema: z.object({ unchanged_because: z.string().max(2000).optional() }),
      },
    ),
    tool(
      async (_input, config) => {
        try {
          return JSON.stringify(await session.waitForReview({ signal: config?.signal }));
        } catch (error) {
          return refusalText(error);
        }
      },
      {
        name: "twinlock_request_review",
        description:
          "Wait until a person decides on the frozen revision. Returns approved, declined, or changes_requested with the reviewer's comments: then revise the handoff and submit it again.",
        schema: z.object({}),
      },
    ),
  ];
}
