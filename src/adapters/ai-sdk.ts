/**
 * `twinlock/ai-sdk`: the gate inside the Vercel AI SDK (`ai` 6.x). The
 * executor's tools are wrapped so each `execute` runs only when the gate
 * allows the call; a denied call throws GateDeniedError, which the SDK sends
 * the model as the tool's error. The planner gets two tools: freeze the
 * handoff, and wait for a person's review. Nothing here approves a call,
 * answers a `needsApproval` request, reviews or consents.
 */
import { loadAdapter } from "./load-adapter.js";

export type { ExecutorGateOptions, ToolScope } from "./executor-gate.js";
export { GateDeniedError } from "./gate-denied-error.js";
export { type GateServerPlannerOptions, gateServerPlannerSession } from "./gate-server-planner-session.js";
export { MissingSdkError } from "./load-adapter.js";
export type { PlannerSession, PlannerSessionOptions, PlannerSource, ReviewOutcome } from "./planner-session.js";

// Loaded, not imported: a missing SDK is one clear line (see loadAdapter), not a failed ESM link.
const adapter = await loadAdapter("twinlock/ai-sdk", () => import("./ai-sdk-adapter.js"));

/** `tools` with every execute behind the executor's gate (a tool without `execute` is left as it is: the application runs it, and must judge it). */
export const gateTools = adapter.gateTools;
/** The planner's tools: `twinlock_submit_handoff` (freeze) and `twinlock_request_review` (wait for a person's decision). */
export const plannerTools = adapter.plannerTools;
