import { consentQuestion, consentQuestionLine } from "../gate/consent-question.js";
import type { HandoffModel } from "../handoff/handoff-model.js";
import { renderEnrolPage } from "../web/render-enrol-page.js";
import { renderErrorPage } from "../web/render-error-page.js";
import { renderRevisionPage } from "../web/render-revision-page.js";
import { renderRunListPage } from "../web/render-run-list-page.js";
import { renderRunPage } from "../web/render-run-page.js";
import { renderSignInPage } from "../web/render-signin-page.js";
import type {
  EnrolPageView,
  ErrorPageView,
  ExecutionView,
  LayoutView,
  RevisionPageView,
  RunListView,
  RunPageView,
  SignInPageView,
} from "../web/view-model.js";

/** Sample views of every page, with every optional part present: the tests of `src/web` render these. */

const HASH2 = `sha256:${"b".repeat(64)}`;
const HASH1 = `sha256:${"a".repeat(64)}`;

/** A signed-in reviewer on a loopback server. */
export function sampleLayout(): LayoutView {
  return { reviewer: "alice", csrf: "csrf-token-1", insecureHttp: false };
}

/** A run list with one run of two pairs. */
export function sampleRunList(): RunListView {
  return {
    layout: sampleLayout(),
    runs: [
      {
        runId: "run_0123456789abcdef",
        suiteId: "mission-directives",
        updatedAt: "2026-05-01T10:00:00.000Z",
        url: "/runs/run_0123456789abcdef",
        pairs: [
          { planner: "MD-29", executor: "MD-30", executorTitle: "Apply the fix", state: "plan_review_pending", revision: 2 },
          { planner: "MD-31", executor: "MD-32", executorTitle: "Rotate keys", state: "investigating", revision: 0 },
        ],
      },
    ],
  };
}

/** A run page with a pair to review, one standing and one lifted stop. */
export function sampleRunPage(): RunPageView {
  return {
    layout: sampleLayout(),
    runId: "run_0123456789abcdef",
    suiteId: "mission-directives",
    settings: { mode: "APPLY_SAFE", environment: "staging", actions: ["A1", "A2"], budget: 3 },
    pairs: [
      {
        planner: "MD-29",
        executor: "MD-30",
        executorTitle: "Apply the fix",
        state: "plan_review_pending",
        revision: 2,
        hash: HASH2,
        revisionUrl: "/runs/run_0123456789abcdef/pairs/MD-29/revisions/2",
        next: {
          operation: "review-pair-plan",
          args: ["run.json", "MD-29"],
          options: [
            ["--decision", "changes_requested|approved|declined"],
            ["--handoff-hash", HASH2],
          ],
          choice: [],
        },
      },
      {
        planner: "MD-31",
        executor: "MD-32",
        executorTitle: "Rotate keys",
        state: "investigating",
        revision: 0,
        hash: null,
        revisionUrl: null,
        next: { operation: "freeze-pair-handoff", args: ["run.json", "MD-31"], options: [["--handoff", "DIR"]], choice: [] },
      },
    ],
    stops: [
      {
        seq: 7,
        reason: "data-loss-risk",
        workflow: "MD-29",
        raisedBy: "bob",
        raisedAt: "2026-05-01T09:00:00.000Z",
        note: "backups unverified",
        lifted: null,
        liftAction: "/runs/run_0123456789abcdef/stops/lift",
      },
      {
        seq: 4,
        reason: "freeze-window",
        workflow: null,
        raisedBy: "carol",
        raisedAt: "2026-04-30T09:00:00.000Z",
        note: null,
        lifted: { by: "alice", at: "2026-04-30T12:00:00.000Z", resolution: "window over" },
        liftAction: null,
      },
    ],
    stopAction: "/runs/run_0123456789abcdef/stops",
  };
}

/** The handoff records of revision 2. */
export function sampleModel(): HandoffModel {
  return {
    format: "twinlock",
    evidence: [{ id: "E1", file: "evidence_index.json", source: {}, summary: "logs/app.log: timeouts at 03:00" }],
    findings: [
      {
        id: "F1",
        file: "finding_register.json",
        source: {},
        summary: "The pool is too small",
        evidence: ["E1"],
        facts: [["confidence", "high"]],
      },
    ],
    unknowns: [
      { id: "U1", file: "finding_register.json", source: {}, question: "Is the replica healthy?", status: "open", owner: "dba" },
      { id: "U2", file: "finding_register.json", source: {}, question: "Which region?", status: "resolved" },
    ],
    actions: [
      {
        id: "A1",
        file: "action_plan.json",
        source: {},
        summary: "Raise the pool size",
        target: "config/pool.yaml",
        risk: "low",
        rollback: "restore the old size",
        findings: ["F1"],
        dependsOn: [],
        verifies: ["C1"],
      },
      {
        id: "A2",
        file: "action_plan.json",
        source: {},
        summary: "Restart the service",
        target: null,
        risk: "medium",
        rollback: null,
        findings: ["#FINDING:F1"],
        dependsOn: ["A1"],
        verifies: [],
      },
    ],
    criteria: [{ id: "C1", file: "acceptance_criteria.json", source: {}, statement: "No timeouts for an hour", method: "dashboard" }],
    stops: [{ reason: "needs-dba", resolved: true, file: "action_plan.json" }],
    recordFiles: ["evidence_index.json", "finding_register.json", "action_plan.json", "acceptance_criteria.json"],
    loaded: { evidence: true, findings: true, unknowns: true, actions: true, criteria: true, stops: true },
  };
}

/** Revision 2 of 2 of MD-29 → MD-30, waiting for review, with every form allowed. */
export function sampleRevisionPage(): RevisionPageView {
  return {
    layout: sampleLayout(),
    runId: "run_0123456789abcdef",
    runUrl: "/runs/run_0123456789abcdef",
    planner: "MD-29",
    revision: 2,
    latestRevision: 2,
    hash: HASH2,
    state: "plan_review_pending",
    frozenAt: "2026-05-01T10:00:00.000Z",
    frozenBy: "planner-agent",
    unchangedBecause: null,
    requestedBy: { reviewer: "alice", feedback: "Say how to roll back A2." },
    changes: [
      { change: "added", marker: "+ACTION:A2", summary: "Restart the service" },
      {
        change: "changed",
        marker: "+ACTION:A1",
        summary: "Raise the pool size",
        fields: [{ field: "risk", before: "medium", after: "low" }],
      },
      { change: "removed", marker: "=VERIFY:C2", summary: "Old criterion" },
    ],
    model: sampleModel(),
    files: [
      {
        path: "report.md",
        size: 40,
        sha256: "c".repeat(64),
        change: "changed",
        shown: "whole",
        shownBytes: 40,
        text: "# Report\n\nPool is small.\n",
        diff: "--- a/report.md\n+++ b/report.md\n@@ -1,3 +1,3 @@\n # Report\n \n-Pool is fine.\n+Pool is small.\n",
      },
      {
        path: "blob.bin",
        size: 3,
        sha256: "d".repeat(64),
        change: "added",
        shown: "whole",
        shownBytes: 3,
        text: null,
        diff: null,
        lossy: "\u0000ab",
      },
    ],
    removedFiles: ["old-notes.txt"],
    report: "# Report\n\nPool is small. See [the runbook](https://example.org/runbook).\n\n## Details\n\nMore.\n",
    executor: {
      id: "MD-30",
      title: "Apply the fix",
      digest: `sha256:${"e".repeat(64)}`,
      body: "# Execute\n\nApply only the approved actions.\n",
      source: "---\nprompt_id: MD-30\ntitle: Apply the fix\n---\n# Execute\n\nApply only the approved actions.\n",
    },
    receipts: [
      {
        kind: "freeze",
        who: "planner-agent",
        decision: null,
        note: null,
        revision: 1,
        hash: HASH1,
        at: "2026-04-30T10:00:00.000Z",
        signature: "ed25519",
        verified: { ok: true, reason: "key planner-agent has the freeze right" },
      },
      {
        kind: "review",
        who: "alice",
        decision: "changes_requested",
        note: "Say how to roll back A2.",
        revision: 1,
        hash: HASH1,
        at: "2026-04-30T11:00:00.000Z",
        signature: "webauthn",
        verified: { ok: false, reason: "the passkey is not enrolled" },
      },
      {
        kind: "freeze",
        who: "planner-agent",
        decision: null,
        note: null,
        revision: 2,
        hash: HASH2,
        at: "2026-05-01T10:00:00.000Z",
        signature: "unsigned",
        verified: null,
      },
    ],
    revisions: [
      { revision: 1, hash: HASH1, frozenAt: "2026-04-30T10:00:00.000Z", url: "/runs/run_0123456789abcdef/pairs/MD-29/revisions/1" },
      { revision: 2, hash: HASH2, frozenAt: "2026-05-01T10:00:00.000Z", url: "/runs/run_0123456789abcdef/pairs/MD-29/revisions/2" },
    ],
    forms: {
      requestChanges: "/runs/run_0123456789abcdef/pairs/MD-29/review",
      approve: "/runs/run_0123456789abcdef/pairs/MD-29/review",
      decline: "/runs/run_0123456789abcdef/pairs/MD-29/review",
      consent: {
        action: "/runs/run_0123456789abcdef/pairs/MD-29/consent",
        question: consentQuestion(
          { planner: "MD-29", executor: "MD-30", executor_title: "Apply the fix", revision: 2, handoff: { hash: HASH2 } },
          { mode: "APPLY_SAFE", environment: "staging", actions: ["A1"], budget: 3 },
        ),
        summary: consentQuestionLine({ planner: "MD-29", executor: "MD-30", executor_title: "Apply the fix", revision: 2 }),
        settings: { mode: "APPLY_SAFE", environment: "staging", actions: ["A1"], budget: 3 },
        modes: ["DRAFT_ONLY", "APPLY_SAFE", "APPLY_APPROVED"],
        actionIds: ["A1", "A2"],
      },
    },
    stale: null,
    execution: null,
  };
}

/** MD-29's plan beside what MD-30 did: A2 not done, one file outside the plan, C1 without evidence, C2 failed. */
export function sampleExecution(): ExecutionView {
  return {
    outcome: "failed",
    closedAt: "2026-05-02T10:00:00.000Z",
    closedBy: "alice",
    actions: [
      { id: "A1", target: "config/pool.yaml", done: true },
      { id: "A2", target: null, done: false },
    ],
    changedFiles: [
      { path: "config/pool.yaml", sha256: `sha256:${"f".repeat(64)}`, outsidePlan: false },
      { path: ".github/workflows/deploy.yml", sha256: `sha256:${"a".repeat(64)}`, outsidePlan: true },
      { path: "old.txt", sha256: null, outsidePlan: false },
    ],
    criteria: [
      { id: "C1", results: [] },
      { id: "C2", results: [{ result: "failed", command: "make check" }] },
    ],
  };
}

/** An enrolment for bob with review and consent rights. */
export function sampleEnrolPage(): EnrolPageView {
  return {
    layout: { ...sampleLayout(), reviewer: null },
    name: "bob",
    rights: ["review", "consent"],
    expiresAt: "2026-05-01T10:15:00.000Z",
    token: "tok123",
  };
}

/** The sign-in page, going back to a run after. */
export function sampleSignInPage(): SignInPageView {
  return { layout: { ...sampleLayout(), reviewer: null }, next: "/runs/run_0123456789abcdef" };
}

/** A 409 error page for a stale hash. */
export function sampleErrorPage(): ErrorPageView {
  return {
    layout: sampleLayout(),
    status: 409,
    title: "Stale revision",
    message: "The hash you reviewed is not the current one.",
    remedy: "Read the current revision and decide again.",
    link: { url: "/runs/run_0123456789abcdef/pairs/MD-29/revisions/3", label: "Revision 3" },
  };
}

/** The run list seen by a reviewer with the review right, with times relative to now. */
export function sampleWaitingRunList(): RunListView {
  return { ...sampleRunList(), rights: ["review"], now: "2026-05-01T12:00:00.000Z" };
}

/** The revision page just after its reviewer approved it: the confirmation at the top. */
export function sampleConfirmedRevisionPage(): RevisionPageView {
  const v = sampleRevisionPage();
  return {
    ...v,
    confirmation: {
      kind: "review",
      who: "alice",
      decision: "approved",
      note: null,
      revision: v.revision,
      hash: v.hash,
      at: "2026-05-01T12:00:00.000Z",
      signature: "webauthn",
      verified: { ok: true, reason: "alice's enrolled passkey, review right" },
    },
  };
}

/** Every page, rendered from its sample view with every optional part present. */
export function samplePages(): Array<[string, () => string]> {
  return [
    ["run list", () => renderRunListPage(sampleRunList())],
    ["empty run list", () => renderRunListPage({ ...sampleRunList(), runs: [] })],
    ["run list, a run waiting on the reviewer", () => renderRunListPage(sampleWaitingRunList())],
    ["revision page with a confirmation", () => renderRevisionPage(sampleConfirmedRevisionPage())],
    ["run page", () => renderRunPage(sampleRunPage())],
    ["revision page", () => renderRevisionPage(sampleRevisionPage())],
    [
      "first revision, no forms",
      () => renderRevisionPage({ ...sampleRevisionPage(), revision: 1, changes: null, requestedBy: null, forms: {} }),
    ],
    [
      "stale revision",
      () => renderRevisionPage({ ...sampleRevisionPage(), stale: { revision: 3, url: "/runs/r/pairs/MD-29/revisions/3" } }),
    ],
    [
      "closed revision, plan versus execution",
      () => renderRevisionPage({ ...sampleRevisionPage(), state: "closed", forms: {}, execution: sampleExecution() }),
    ],
    ["enrol page", () => renderEnrolPage(sampleEnrolPage())],
    ["sign-in page", () => renderSignInPage(sampleSignInPage())],
    ["error page", () => renderErrorPage(sampleErrorPage())],
  ];
}
