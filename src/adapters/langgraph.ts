/**
 * `twinlock/langgraph`: the gate inside LangGraph.js (`@langchain/langgraph`
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
import { loadAdapter } from "./load-adapter.js";

export type { ExecutorGateOptions, ToolScope } from "./executor-gate.js";
export { type GateServerPlannerOptions, gateServerPlannerSession } from "./gate-server-planner-session.js";
export type { ReviewInterrupt } from "./langgraph-adapter.js";
export { MissingSdkError } from "./load-adapter.js";
export type { PlannerSession, PlannerSessionOptions, PlannerSource, ReviewOutcome } from "./planner-session.js";

// Loaded, not imported: a missing SDK is one clear line (see loadAdapter), not a failed ESM link.
const adapter = await loadAdapter("twinlock/langgraph", () => import("./langgraph-adapter.js"));

/**
 * `tools`, each behind the executor's gate: same name, description and
 * schema; the original runs only on an allowed call. The model's arguments
 * are parsed through the schema once, by the wrapper, and the original's own
 * body (`_call`) gets exactly the value the gate judged: its `invoke` would
 * parse them again, and a schema whose parse is not idempotent (a transform)
 * would hand it a value the gate never saw.
 */
export const gateLangChainTools = adapter.gateLangChainTools;
/** The planner's tools: `twinlock_submit_handoff` (freeze) and `twinlock_request_review` (wait for a person's decision, in the tool). */
export const plannerLangChainTools = adapter.plannerLangChainTools;
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
export const plannerInterruptTools = adapter.plannerInterruptTools;
/**
 * Wait until a person decides on the planner's frozen revision (through the
 * gate, as `twinlock_request_review` would) and answer the Command that
 * resumes the paused graph with that decision and its comments. Run it where
 * the session is bound; the tool it resumes re-reads the gate either way.
 */
export const reviewResume = adapter.reviewResume;
/** What a resumed review answers when no decision is recorded yet: the model asks again, which pauses the graph again. */
export const NO_DECISION_YET = adapter.NO_DECISION_YET;
