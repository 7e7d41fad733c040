/**
 * `twinlock/openai-agents`: the gate inside the OpenAI Agents SDK
 * (`@openai/agents` 0.14.x). Each function tool of the executor's agent is
 * wrapped so its `invoke` runs only when the gate allows the call; a denied
 * call answers the model with the reason instead (the tool never runs). The
 * planner gets two function tools: freeze the handoff, and wait for a
 * person's review. Nothing here approves a `needsApproval` interruption,
 * reviews or consents.
 */
import { loadAdapter } from "./load-adapter.js";

export type { ExecutorGateOptions, ToolScope } from "./executor-gate.js";
export { type GateServerPlannerOptions, gateServerPlannerSession } from "./gate-server-planner-session.js";
export { MissingSdkError } from "./load-adapter.js";
export type { PlannerSession, PlannerSessionOptions, PlannerSource, ReviewOutcome } from "./planner-session.js";

// Loaded, not imported: a missing SDK is one clear line (see loadAdapter), not a failed ESM link.
const adapter = await loadAdapter("twinlock/openai-agents", () => import("./openai-agents-adapter.js"));

/** `tools` with every invoke behind the executor's gate; each keeps its name, schema and the rest of its own properties. */
export const gateFunctionTools = adapter.gateFunctionTools;
/** The planner's function tools: `twinlock_submit_handoff` (freeze) and `twinlock_request_review` (wait for a person's decision). */
export const plannerFunctionTools = adapter.plannerFunctionTools;
