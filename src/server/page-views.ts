import { consentQuestion, consentQuestionLine } from "../gate/consent-question.js";
import { executorDigest, loadRunSuite } from "../gate/load-run-suite.js";
import { presentPlan } from "../gate/present-plan.js";
import { revisionToCompare } from "../gate/revision-to-compare.js";
import { describeNextStep, nextStepData } from "../run/next-step.js";
import { heldReceipts } from "../run/receipt-kinds.js";
import type { RunState, Workflow } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunListing, RunStore } from "../store/run-store.js";
import { MODES, type Prompt } from "../suite/prompt.js";
import { judgeReceiptTrust } from "../trust/judge-receipt-trust.js";
import { renderAgentDocumentsOffThread } from "../web/render-agent-documents-off-thread.js";
import type {
  ExecutionView,
  LayoutView,
  PairSummaryView,
  ReceiptView,
  RevisionFormsView,
  RevisionPageView,
  RunListView,
  RunPageView,
  RunSummaryView,
  StopView,
} from "../web/view-model.js";
import { apiPaths } from "./api-paths.js";

/** The pages' links, in one place. */
export const pagePaths = {
  run: (runId: string) => `/runs/${encodeURIComponent(runId)}`,
  revision: (runId: string, planner: string, revision: number) =>
    `/runs/${encodeURIComponent(runId)}/pairs/${encodeURIComponent(planner)}/revisions/${revision}`,
};

/** The run list: every run the store holds, with its pairs' states. */
export async function runListView(store: RunStore, layout: LayoutView, listings: RunListing[]): Promise<RunListView> {
  const runs: RunSummaryView[] = [];
  for (const l of listings) {
    let run: LoadedRun;
    try {
      run = await store.read(l.ref);
    } catch {
      // A run that no longer verifies is left off the list; its own page says why.
      continue;
    }
    runs.push({
      runId: l.run_id,
      suiteId: run.state.suite.suite_id ?? "(none)",
      updatedAt: l.updated_at,
      url: pagePaths.run(l.run_id),
      pairs: Object.values(run.state.workflows).map(pairSummary),
    });
  }
  return { layout, runs };
}

/** A pair as the run list and the run page name it. */
function pairSummary(w: Workflow): PairSummaryView {
  return { planner: w.planner, executor: w.executor, executorTitle: w.executor_title, state: w.state, revision: w.revision };
}

/** Stops as the pages show them: each standing one with its own lift form, which names that stop alone. */
function stopViews(run: LoadedRun, stops: LoadedRun["state"]["stops"], signedIn: boolean): StopView[] {
  return stops.map((s) => ({
    seq: s.seq,
    reason: s.reason,
    workflow: s.workflow,
    raisedBy: s.raised_by,
    raisedAt: s.raised_at,
    note: s.note,
    lifted: s.resolved_at ? { by: s.resolved_by ?? "unknown", at: s.resolved_at, resolution: s.resolution ?? "" } : null,
    liftAction: signedIn && !s.resolved_at ? apiPaths.liftStop(run.state.run_id) : null,
  }));
}

/** A run's page: settings, pairs with their next step, stops with their forms. */
export function runPageView(run: LoadedRun, layout: LayoutView, signedIn: boolean): RunPageView {
  const runId = run.state.run_id;
  const stops = stopViews(run, run.state.stops, signedIn);
  return {
    layout,
    runId,
    suiteId: run.state.suite.suite_id ?? "(none)",
    settings: run.state.settings,
    stops,
    stopAction: signedIn ? apiPaths.stops(runId) : null,
    pairs: Object.values(run.state.workflows).map((w) => ({
      ...pairSummary(w),
      hash: w.handoff?.hash ?? null,
      next: nextStepData(describeNextStep(w.state, { run: runId, planner: w.planner, executor: w.executor, hash: w.handoff?.hash })),
      revisionUrl: w.handoff ? pagePaths.revision(runId, w.planner, w.revision) : null,
    })),
  };
}

/**
 * A revision's page, from the frozen bytes (present), the executor as the
 * pinned suite has it now, the receipts judged under the pinned policy,
 * and the forms the state allows on the latest revision.
 */
export async function revisionPageView(
  store: RunStore,
  ref: string,
  run: LoadedRun,
  wf: Workflow,
  revision: number,
  layout: LayoutView,
  signedIn: boolean,
): Promise<RevisionPageView> {
  const runId = run.state.run_id;
  // What changed since the revision this reviewer last decided on, else since the one before.
  const compared = revisionToCompare(wf, revision, layout.reviewer);
  const p = await presentPlan(store, ref, wf.planner, compared ? { revision, against: compared.revision } : { revision });
  const pinned = loadRunSuite(store.home, run.state, wf);
  const prompt = pinned.suite.byId.get(wf.executor);
  const latest = revision === wf.revision;
  const report = p.files.find((f) => f.path === "report.md")?.text ?? null;
  const forms: RevisionFormsView = {};
  if (signedIn && latest && wf.handoff) {
    const review = apiPaths.review(runId, wf.planner);
    if (wf.state === "plan_review_pending") Object.assign(forms, { requestChanges: review, approve: review, decline: review });
    if (wf.state === "execution_consent_pending")
      forms.consent = {
        action: apiPaths.consent(runId, wf.planner),
        question: consentQuestion(wf, run.state.settings),
        summary: consentQuestionLine(wf),
        settings: run.state.settings,
        modes: [...MODES],
        // The latest revision's records shown, already read from its frozen bytes for the page ("all" covers the rest).
        actionIds: p.model.actions.map((a) => a.id),
      };
  }
  if (signedIn && latest && wf.handoff && wf.state === "executing")
    forms.verifiedClose = { action: apiPaths.verifiedClose(runId, wf.planner), criteria: p.model.criteria.map((c) => c.id) };
  const executor = executorShown(pinned, wf, prompt);
  // The agent's Markdown is rendered on a worker thread and kept by its hash: a page GET never renders it on this one.
  const rendered = await renderAgentDocumentsOffThread({ executorBody: executor.body, report });
  const requested = [...wf.reviews].reverse().find((r) => r.revision === p.previousRevision && r.decision === "changes_requested");
  return {
    layout,
    runId,
    runUrl: pagePaths.run(runId),
    planner: wf.planner,
    revision,
    latestRevision: wf.revision,
    hash: p.hash,
    state: wf.state,
    frozenAt: p.frozenAt,
    frozenBy: p.frozenBy,
    ...(run.state.change === undefined ? {} : { change: run.state.change }),
    // The planner's "nothing changed" speaks of the step from the revision before: shown only when that is what the page compares with.
    unchangedBecause: latest && (compared?.revision ?? revision - 1) === revision - 1 ? (wf.handoff?.unchanged_because ?? null) : null,
    requestedBy: requested ? { reviewer: requested.reviewer, feedback: requested.feedback ?? "" } : null,
    previousComments: p.previousComments,
    requestedComments: p.requestedComments,
    comparedWith: compared,
    changes: p.previousRevision === null ? null : p.changes,
    changesTotal: p.changesTotal,
    model: p.model,
    recordsNotShown: p.recordsNotShown && {
      notice: p.recordsNotShown.notice,
      totals: p.recordsNotShown.totals,
      cut: p.recordsNotShown.cut,
    },
    files: p.files,
    removedFiles: p.removedFiles,
    filesNotListed: p.filesNotListed,
    report,
    rendered,
    executor,
    receipts: receiptViews(run.state, wf, pinned.config),
    hardStops: stopViews(
      run,
      run.state.stops.filter((s) => s.workflow === null || s.workflow === wf.planner),
      signedIn,
    ),
    revisions: wf.history.map((h) => ({
      revision: h.revision,
      hash: h.hash,
      frozenAt: h.frozen_at,
      url: pagePaths.revision(runId, wf.planner, h.revision),
    })),
    forms,
    stale: latest ? null : { revision: wf.revision, url: pagePaths.revision(runId, wf.planner, wf.revision) },
    execution: executionView(wf, revision, p.model),
  };
}

/**
 * The plan of `revision` beside what `close` recorded as done, when the
 * executed revision (the last admission's) is this one; null otherwise. The
 * deviations are the ones close computed and recorded, not recomputed here.
 */
function executionView(wf: Workflow, revision: number, model: RevisionPageView["model"]): ExecutionView | null {
  const result = wf.result;
  const executed = wf.admissions[wf.admissions.length - 1];
  if (!result?.execution || executed?.revision !== revision) return null;
  const { conformance: c, changed_files, criteria } = result.execution;
  return {
    outcome: result.outcome,
    closedAt: result.at,
    closedBy: result.by,
    actions: model.actions.map((a) => ({ id: a.id, target: a.target, done: !c.actions_not_done.includes(a.id) })),
    changedFiles: changed_files.map((f) => ({ path: f.path, sha256: f.sha256, outsidePlan: c.files_outside_plan.includes(f.path) })),
    criteria: model.criteria.map((k) => ({
      id: k.id,
      results: criteria.filter((x) => x.id === k.id).map((x) => ({ result: x.result, command: x.command })),
    })),
  };
}

/**
 * The executor as the page shows it: the text shown and the digest the
 * forms carry are of the one read the suite was parsed from (a decision on a
 * file changed since is refused).
 */
function executorShown(pinned: ReturnType<typeof loadRunSuite>, wf: Workflow, prompt: Prompt | undefined) {
  if (!prompt) return { id: wf.executor, title: wf.executor_title, digest: executorDigest(pinned, wf), body: "", source: "" };
  return { id: wf.executor, title: prompt.title ?? wf.executor_title, digest: prompt.sha256, body: prompt.body, source: prompt.source };
}

/**
 * Every receipt of a pair (the run's stop lifts included), oldest first, each
 * with its signature kind and whether it verifies under the pinned policy now,
 * against the right RECEIPT_KINDS gives its kind. The gate's own records (an
 * admission) are not judged against a person's right.
 */
export function receiptViews(state: RunState, wf: Workflow, config: Parameters<typeof judgeReceiptTrust>[2]): ReceiptView[] {
  const views: ReceiptView[] = [];
  for (const { planner, receipt, row } of heldReceipts(state)) {
    if (planner !== wf.planner && !(planner === null && row.kind === "stop_resolution")) continue;
    const right = row.right;
    const verdict = right === null || !receipt.signature ? null : judgeReceiptTrust(receipt, right, config);
    const signature = receipt.signature;
    views.push({
      kind: receipt.kind,
      ...row.shown(receipt),
      revision: typeof receipt.revision === "number" ? receipt.revision : null,
      hash: typeof receipt.handoff_hash === "string" ? receipt.handoff_hash : null,
      at: receipt.at,
      signature: signature ? (signature.kind === "webauthn" ? "webauthn" : "ed25519") : "unsigned",
      byGate: right === null,
      verified:
        verdict === null || !signature
          ? null
          : verdict.ok
            ? {
                ok: true,
                reason: `${verdict.signer ?? row.shown(receipt).who}'s ${signature.kind === "webauthn" ? "enrolled passkey" : "key"}, ${right} right`,
              }
            : { ok: false, reason: verdict.reason },
    });
  }
  // The agent's report of how its work ended is shown as its report: no receipt, nobody's call but the agent's.
  const r = wf.result;
  if (r?.report)
    views.push({
      kind: "agent_report",
      who: r.by,
      decision: `reported ${r.outcome} (the agent's report, not a person's call)`,
      note: r.residual,
      revision: null,
      hash: null,
      at: r.at,
      signature: "unsigned",
      verified: null,
    });
  return views.sort((a, b) => a.at.localeCompare(b.at));
}
