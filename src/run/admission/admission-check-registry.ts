import type { AdmissionCheckModule } from "./admission-facts.js";
import { approvedReviewHash } from "./checks/approved-review-hash.js";
import { chainVerifies } from "./checks/chain-verifies.js";
import { consentForCurrentHash } from "./checks/consent-for-current-hash.js";
import { consentNamesExecutor } from "./checks/consent-names-executor.js";
import { consentScope } from "./checks/consent-scope.js";
import { consentUnused } from "./checks/consent-unused.js";
import { dryRunPassed } from "./checks/dry-run-passed.js";
import { executorFileUnchanged } from "./checks/executor-file-unchanged.js";
import { frozenBytesIntact } from "./checks/frozen-bytes-intact.js";
import { handoffUnchanged } from "./checks/handoff-unchanged.js";
import { latestReviewApproved } from "./checks/latest-review-approved.js";
import { noOpenStop } from "./checks/no-open-stop.js";
import { pairUnchanged } from "./checks/pair-unchanged.js";
import { plannerIsTwin } from "./checks/planner-is-twin.js";
import { policyUnchanged } from "./checks/policy-unchanged.js";
import { suitePinned } from "./checks/suite-pinned.js";
import { workflowReady } from "./checks/workflow-ready.js";

/**
 * Every admission check of SPEC §5, in the order admission reports them: the
 * one list admission (`runAdmissionChecks`) and CI's re-judging
 * (`rejudgeAdmissions`) both read. A new check is its module in `checks/` and
 * one row here (then its row in docs/reference.md "Admission checks").
 */
export const ADMISSION_CHECKS: readonly AdmissionCheckModule[] = [
  plannerIsTwin,
  approvedReviewHash,
  latestReviewApproved,
  handoffUnchanged,
  consentNamesExecutor,
  consentForCurrentHash,
  consentScope,
  noOpenStop,
  pairUnchanged,
  suitePinned,
  frozenBytesIntact,
  policyUnchanged,
  executorFileUnchanged,
  consentUnused,
  dryRunPassed,
  chainVerifies,
  workflowReady,
];
