/**
 * twinlock's library API: the same functions the CLI calls, so an agent
 * runtime can use the gate without spawning a process.
 */

// Suite and checks
export { loadSuite, type Suite } from "./suite/load-suite.js";
export { findSuiteRoot } from "./suite/find-suite-root.js";
export type { Prompt, PromptRole, Mode } from "./suite/prompt.js";
export type { SuiteConfig } from "./suite/suite-config.js";
export { validateSuite, type ValidationReport } from "./checks/validate-suite.js";
export { checkBodies } from "./checks/check-bodies.js";
export { buildGraph, type CapabilityGraph } from "./graph/build-graph.js";
export { renderGraph, type GraphFormat } from "./graph/render-graph.js";
export type { Diagnostic, DiagnosticCode } from "./diagnostics/diagnostic.js";
export { formatDiagnostic } from "./diagnostics/format-diagnostic.js";

// The one exact-twin resolution
export { resolveExactTwin, judgeRequestedExecutor, type ExactTwin, type TwinResolution } from "./twin/resolve-exact-twin.js";

// Handoff
export { hashHandoff, type HandoffDigest, type ManifestEntry } from "./handoff/hash-handoff.js";
export { checkReadiness, type ReadinessReport } from "./handoff/check-readiness.js";

// Runs: the source's four commands, status, admission and the rest of the gate
export { initRun } from "./gate/init-run.js";
export { freezePairHandoff } from "./gate/freeze-pair-handoff.js";
export { reviewPairPlan } from "./gate/review-pair-plan.js";
export { consentPairExecution, consentQuestion } from "./gate/consent-pair-execution.js";
export { approveApply } from "./gate/approve-apply.js";
export { admit, type AdmitResult } from "./gate/admit.js";
export { pairStatusFromFlags, pairStatusFromRun, type PairStatus } from "./gate/pair-status.js";
export { presentPlan } from "./gate/present-plan.js";
export { raiseStop, resolveStop } from "./gate/hard-stops.js";
export { closeWorkflow } from "./gate/close-workflow.js";
export { readRunFile, type LoadedRun } from "./store/run-store.js";
export { ADMISSION_STOP } from "./run/admission-checks.js";
export { STATES, TRANSITIONS, type State } from "./run/transition-table.js";
export type { RunFile, RunState, Workflow, ReviewReceipt, ConsentReceipt, AdmissionReceipt } from "./run/run-schema.js";

// Errors the API throws
export { UsageError, RefusalError, ConflictError, IntegrityError, EXIT } from "./errors/errors.js";
