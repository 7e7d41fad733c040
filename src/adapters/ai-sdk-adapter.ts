/**
 * What `twinlock/ai-sdk` loads (its entry, ai-sdk.ts, loads it so a missing SDK is one clear line): the gate inside the Vercel AI SDK (`ai` 6.x). The
 * executor's tools are wrapped so each `execute` runs only when the gate
 * allows the call; a denied call throws GateDeniedError, which the SDK sends
 * the model as the tool's error. The planner gets two tools: freeze the
 * handoff, and wait for a person's review. Nothing here approves a call,
 * answers a `needsApproval` request, reviews or consents.
 */
import { type ToolSet, tool } from "ai";
import { z } from "zod";
import { type ExecutorGateOptions, executorGate } from "./executor-gate.js";
import { GateDeniedError } from "./gate-denied-error.js";
import { type PlannerSource, refusalText, sessionOf } from "./planner-session.js";

/** `tools` with every execute behind the executor's gate (a tool without `execute` is left as it is: the application runs it, and must judge it). */
export function gateTools<T extends ToolSet>(
  tools: T,
  options: Omit<ExecutorGateOptions, "tools"> & { scopes: ExecutorGateOptions["tools"] },
): T {
  const gate = executorGate({ ...options, tools: options.scopes });
  const out: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(tools)) {
    const execute = t.execute;
    if (typeof execute !== "function") {
      out[name] = t;
      continue;
    }
    out[name] = {
      ...t,
      execute: (input: unknown, o: unknown) => {
        const j = gate.judge(name, input);
        if (!j.allow) throw new GateDeniedError(j.reason);
        return (execute as (i: unknown, o: unknown) => unknown)(input, o);
      },
    };
  }
  return out as T;
}

/** The planner's tools: `twinlock_submit_handoff` (freeze) and `twinlock_request_review` (wait for a person's decision). */
export function plannerTools(options: PlannerSource) {
  const session = sessionOf(options);
  return {
    twinlock_submit_handoff: tool({
      description:
        "Freeze your handoff folder: the gate copies and hashes every file, and a person reviews exactly these bytes. Returns the hash and revision.",
      inputSchema: z.object({ unchanged_because: z.string().max(2000).optional() }),
      execute: async ({ unchanged_because }) => {
        try {
          return await session.submitHandoff({ unchangedBecause: unchanged_because });
        } catch (error) {
          return { refused: refusalText(error) };
        }
      },
    }),
    twinlock_request_review: tool({
      description:
        "Wait until a person decides on the frozen revision. Returns approved, declined, or changes_requested with the reviewer's comments: then revise the handoff and submit it again.",
      inputSchema: z.object({}),
      execute: async (_input, o) => {
        try {
          return await session.waitForReview({ signal: o.abortSignal });
        } catch (error) {
          return { refused: refusalText(error) };
        }
      },
    }),
  };
}
