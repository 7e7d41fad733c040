/**
 * twinlock's library API: the same functions the CLI calls, so an agent
 * runtime can use the gate without spawning a process.
 */

export { checkBodies } from "./checks/check-bodies.js";
export { type ValidationReport, validateSuite } from "./checks/validate-suite.js";
export type { Diagnostic, DiagnosticCode } from "./diagnostics/diagnostic.js";
export { formatDiagnostic } from "./diagnostics/format-diagnostic.js";
// Errors the API throws
export { ConflictError, EXIT, IntegrityError, RefusalError, UsageError } from "./errors/errors.js";
export { type AdmitResult, admit } from "./gate/admit.js";
export { approveApply } from "./gate/approve-apply.js";
export { checkoutApproved } from "./gate/checkout-approved.js";
export { closeWorkflow } from "./gate/close-workflow.js";
export { consentPairExecution, consentQuestion } from "./gate/consent-pair-execution.js";
export { freezePairHandoff } from "./gate/freeze-pair-handoff.js";
export { raiseStop, resolveStop } from "./gate/hard-stops.js";
// Runs: the source's four commands, status, admission and the rest of the gate
export { initRun } from "./gate/init-run.js";
export { type PairStatus, pairStatusFromFlags, pairStatusFromRun } from "./gate/pair-status.js";
export { presentPlan } from "./gate/present-plan.js";
export { reviewPairPlan } from "./gate/review-pair-plan.js";
export { buildGraph, type CapabilityGraph } from "./graph/build-graph.js";
export { type GraphFormat, renderGraph } from "./graph/render-graph.js";
export { checkReadiness, type ReadinessReport } from "./handoff/check-readiness.js";
// Handoff
export { type HandoffDigest, hashHandoff, type ManifestEntry } from "./handoff/hash-handoff.js";
export { folderRunStore } from "./home/folder-run-store.js";
// The gate home: the trust root the agent cannot write (pins, checkpoints, consumed consents, frozen bytes)
export { type GateHome, openGateHome, resolveHomeDir } from "./home/gate-home.js";
export { readRun } from "./home/run-ledger.js";
export { listPins, type Pin, pinSuite, unpinSuite } from "./home/suite-pins.js";
export { ADMISSION_STOP } from "./run/admission-checks.js";
export type { AdmissionReceipt, ConsentReceipt, ReviewReceipt, RunFile, RunState, Workflow } from "./run/run-schema.js";
export { STATES, type State, TRANSITIONS } from "./run/transition-table.js";
export { type LoadedRun, readRunFile } from "./store/run-file.js";
export type { RunListing, RunStore } from "./store/run-store.js";
export { findSuiteRoot } from "./suite/find-suite-root.js";
// Suite and checks
export { loadSuite, type Suite } from "./suite/load-suite.js";
export type { Mode, Prompt, PromptRole } from "./suite/prompt.js";
export type { SuiteConfig } from "./suite/suite-config.js";
// The one exact-twin resolution
export { type ExactTwin, judgeRequestedExecutor, resolveExactTwin, type TwinResolution } from "./twin/resolve-exact-twin.js";
