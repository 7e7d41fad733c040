/**
 * What `twinlock/langgraph` loads (its entry, langgraph.ts, loads it so a missing SDK is one clear line): the gate inside LangGraph.js (`@langchain/langgraph`
 * 1.7 with `@langchain/core` 1.4). Each LangChain tool of the executor's
 * agent is wrapped in a tool of the same name and schema that runs the
 * original only when the gate allows the call; a denied call answers the
 * model (through ToolNode's ToolMessage) with the reason instead. The planner
 * gets two tools: freeze the handoff, and wait for a person's review —
 * in the tool (`plannerLangChainTools`) or, on a graph with a checkpointer,
 * by pausing the graph with LangGraph's `interrupt()` (`plannerInterruptTools`,
 * resumed by `reviewResume`). Nothing here decides for the person: a resume
 * value is only a wake-up, and the gate's records are the decision.
 */
import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { Command, interrupt } from "@langchain/langgraph";
import { z } from "zod";
import { type ExecutorGateOptions, executorGate } from "./executor-gate.js";
import { type PlannerSession, type PlannerSource, type ReviewOutcome, refusalText, sessionOf } from "./planner-session.js";

/**
 * `tools`, each behind the executor's gate: same name, description and
 * schema; the original runs only on an allowed call. The model's arguments
 * are parsed through the schema once, by the wrapper, and the original's own
 * body (`_call`) gets exactly the value the gate judged: its `invoke` would
 * parse them again, and a schema whose parse is not idempotent (a transform)
 * would hand it a value the gate never saw.
 */
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
        const body = (t as unknown as { _call?: unknown })._call;
        if (typeof body !== "function")
          return `twinlock: ${t.name} denied: it is not a LangChain StructuredTool, so it cannot be run on the input the gate judged`;
        return body.call(t, input, undefined, config);
      },
      // biome-ignore lint/suspicious/noExplicitAny: the original's own schema, whatever kind it is.
      { name: t.name, description: t.description, schema: t.schema as any },
    ),
  );
}

/** The planner's tools: `twinlock_submit_handoff` (freeze) and `twinlock_request_review` (wait for a person's decision, in the tool). */
export function plannerLangChainTools(options: PlannerSource): StructuredToolInterface[] {
  const session = sessionOf(options);
  return [
    submitTool(session),
    tool(
      async (_input, config) => {
        try {
          return JSON.stringify(await session.waitForReview({ signal: config?.signal }));
        } catch (error) {
          return refusalText(error);
        }
      },
      { name: "twinlock_request_review", description: REVIEW_DESCRIPTION, schema: z.object({}) },
    ),
  ];
}

/** The value `twinlock_request_review` pauses the graph with (the `__interrupt__` entry's `value`): the revision that waits for a person. */
export interface ReviewInterrupt {
  type: "twinlock_review";
  revision: number;
  hash: string;
}

/**
 * The planner's tools for a graph compiled with a checkpointer:
 * `twinlock_request_review` pauses the graph through LangGraph's own
 * `interrupt()` (the `__interrupt__` value is a ReviewInterrupt) instead of
 * holding the process, so the thread can wait for days and be resumed from
 * its checkpoint by any process (`reviewResume`). Whatever it is resumed
 * with, the tool re-reads the gate's records: it answers the model with the
 * decision a person recorded on that revision, and with none recorded
 * NO_DECISION_YET (one pause per run of the tool, so a resume costs two
 * reads of the gate however many came before). A resume value never
 * approves anything.
 */
export function plannerInterruptTools(options: PlannerSource): StructuredToolInterface[] {
  const session = sessionOf(options);
  return [
    submitTool(session),
    tool(
      async () => {
        // One interrupt() per run of the tool: LangGraph runs the tool again from its start on each resume, and every
        // earlier interrupt() would return its old resume value at once, so a loop would read the gate once per earlier resume.
        const read = async () => {
          try {
            return await session.reviewNow();
          } catch (error) {
            return refusalText(error);
          }
        };
        const before = await read();
        if (typeof before === "string") return before;
        if (before.decided) return JSON.stringify(before.decided);
        interrupt({ type: "twinlock_review", revision: before.revision, hash: before.hash } satisfies ReviewInterrupt);
        // Resumed: the resume value is only a wake-up; the gate's records are the decision.
        const after = await read();
        if (typeof after === "string") return after;
        return after.decided ? JSON.stringify(after.decided) : NO_DECISION_YET;
      },
      { name: "twinlock_request_review", description: REVIEW_DESCRIPTION, schema: z.object({}) },
    ),
  ];
}

/**
 * Wait until a person decides on the planner's frozen revision (through the
 * gate, as `twinlock_request_review` would) and answer the Command that
 * resumes the paused graph with that decision and its comments. Run it where
 * the session is bound; the tool it resumes re-reads the gate either way.
 */
export async function reviewResume(options: PlannerSource & { signal?: AbortSignal; timeoutMs?: number }): Promise<Command<ReviewOutcome>> {
  const outcome = await sessionOf(options).waitForReview({ signal: options.signal, timeoutMs: options.timeoutMs });
  return new Command({ resume: outcome });
}

/** What a resumed review answers when no decision is recorded yet: the model asks again, which pauses the graph again. */
export const NO_DECISION_YET = "no decision yet; call twinlock_request_review again";

const REVIEW_DESCRIPTION =
  "Wait until a person decides on the frozen revision. Returns approved, declined, or changes_requested with the reviewer's comments: then revise the handoff and submit it again.";

function submitTool(session: PlannerSession): StructuredToolInterface {
  return tool(
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
  );
}
