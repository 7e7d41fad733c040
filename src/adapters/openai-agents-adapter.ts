/**
 * What `twinlock/openai-agents` loads (its entry, openai-agents.ts, loads it so a missing SDK is one clear line): the gate inside the OpenAI Agents SDK
 * (`@openai/agents` 0.14.x). Each function tool of the executor's agent is
 * wrapped so its `invoke` runs only when the gate allows the call; a denied
 * call answers the model with the reason instead (the tool never runs). The
 * planner gets two function tools: freeze the handoff, and wait for a
 * person's review. Nothing here approves a `needsApproval` interruption,
 * reviews or consents.
 */
import { type FunctionTool, tool } from "@openai/agents";
import { z } from "zod";
import { type ExecutorGateOptions, executorGate } from "./executor-gate.js";
import { type PlannerSource, refusalText, sessionOf } from "./planner-session.js";

// biome-ignore lint/suspicious/noExplicitAny: the SDK's own tool lists are typed so.
type AnyFunctionTool = FunctionTool<any, any, any>;

/** `tools` with every invoke behind the executor's gate; each keeps its name, schema and the rest of its own properties. */
export function gateFunctionTools<T extends AnyFunctionTool>(
  tools: readonly T[],
  options: Omit<ExecutorGateOptions, "tools"> & { scopes: ExecutorGateOptions["tools"] },
): T[] {
  const gate = executorGate({ ...options, tools: options.scopes });
  return tools.map((t) => {
    // Every own property kept as it is (the SDK keys some by symbol), the invoke replaced.
    const gated = Object.defineProperties({}, Object.getOwnPropertyDescriptors(t)) as T;
    const invoke = t.invoke;
    gated.invoke = async (runContext, input, details) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(input);
      } catch {
        return `twinlock: ${t.name} denied: its input is not JSON`;
      }
      const j = gate.judge(t.name, parsed);
      if (!j.allow) return j.reason;
      return invoke.call(t, runContext, input, details);
    };
    return gated;
  });
}

/** The planner's function tools: `twinlock_submit_handoff` (freeze) and `twinlock_request_review` (wait for a person's decision). */
export function plannerFunctionTools(options: PlannerSource) {
  const session = sessionOf(options);
  return [
    tool({
      name: "twinlock_submit_handoff",
      description:
        "Freeze your handoff folder: the gate copies and hashes every file, and a person reviews exactly these bytes. Returns the hash and revision.",
      parameters: z.object({ unchanged_because: z.string().max(2000).nullable() }),
      execute: async ({ unchanged_because }) => {
        try {
          return JSON.stringify(await session.submitHandoff({ unchangedBecause: unchanged_because ?? undefined }));
        } catch (error) {
          return refusalText(error);
        }
      },
    }),
    tool({
      name: "twinlock_request_review",
      description:
        "Wait until a person decides on the frozen revision. Returns approved, declined, or changes_requested with the reviewer's comments: then revise the handoff and submit it again.",
      parameters: z.object({}),
      execute: async () => {
        try {
          return JSON.stringify(await session.waitForReview());
        } catch (error) {
          return refusalText(error);
        }
      },
    }),
  ];
}
