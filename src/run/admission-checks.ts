import type { ManifestEntry } from "../handoff/hash-handoff.js";
import type { Mode } from "../suite/prompt.js";
import { describeNextStep } from "./next-step.js";
import { receiptHash } from "./receipt-hash.js";
import { legalNextStep } from "./refuse-transition.js";
import type { AdmissionCheck, DryRunResult, RunState, Workflow } from "./run-schema.js";

/** The stop line of SPEC §5, printed when any admission check fails. */
export const ADMISSION_STOP = "!STOP:invalid-reviewed-handoff-or-exact-twin-consent";

/** Everything admission compares, gathered by the caller (the suite and the handoff as they are now). */
export interface AdmissionFacts {
  state: RunState;
  workflow: Workflow | undefined;
  requestedExecutor: string;
  /** The run as the caller named it, filled into a next step a detail suggests (RUN when not given). */
  runFile?: string;
  /** The planner the caller named with --planner, if any. */
  requestedPlanner?: string;
  /** The requested executor's `paired_prompt_id` in the suite now, or why it could not be read. */
  suiteTwin: {
    plannerOfRequested: string | null;
    twinOfPlanner: string | null;
    /** The runtime's one exact-twin judgement of the requested executor (judgeRequestedExecutor). */
    verdict: { ok: boolean; reason?: string } | null;
    pairDigest: string | null;
    problem?: string;
  };
  /** The handoff re-hashed now, or the reason it could not be. */
  rehash: { hash: string; files: ManifestEntry[] } | { error: string };
  /** +ACTION IDs of the frozen plan. */
  planActionIds: string[];
  requested: { mode?: Mode; environment?: string; actions?: string[] };
  /** The run's chain, and its agreement with the gate home's checkpoint. */
  chain: { ok: true } | { ok: false; reason: string };
  /** The pinned suite: present, same folder, twinlock.yaml as pinned; or why not. */
  pin: { ok: boolean; detail: string };
  /** Problems with the frozen bytes in the gate home (missing, damaged); empty when intact. */
  frozenBytes: string[];
  /** The admission that already used the current consent, as the gate home remembers it. */
  consumedInHome: { at: string; run_id: string } | undefined;
  /** sha256 of the pinned twinlock.yaml now, or null when it cannot be read. */
  policyDigestNow: string | null;
  /** sha256 of the executor prompt's file now, or null when it cannot be read. */
  executorDigestNow: string | null;
  /** Stops lifted by a resolution the pinned policy does not trust, with why. */
  untrustedStopLifts: string[];
  /** Whether the executor's prompt declares `dry_run_required: true`. */
  dryRunRequired: boolean;
  /** The executor prompt's `allowed_modes` in the pinned suite (empty: any mode); undefined when it cannot be read. */
  executorModes?: readonly Mode[];
  /** Why a dry-run result is not trusted under the pinned policy (signature, key, `apply` right), or undefined when it is. */
  distrustDryRunResult: (receipt: DryRunResult) => string | undefined;
  /** An admission to act, or the recorded dry run (DRAFT_ONLY, consuming nothing) that dry_run_required asks for first. */
  purpose: "admit" | "dry-run";
  now: Date;
}

/** The values admission recorded for a request, filled with the consent's where not given. */
export interface AdmissionRequest {
  mode: Mode;
  environment: string;
  actions: string[];
  budget: number | null;
}

/**
 * Run every admission check of SPEC §5 and report each with the values it
 * compared. Pure: the caller gathers the facts, and records nothing unless
 * every check passes.
 */
export function runAdmissionChecks(f: AdmissionFacts): { checks: AdmissionCheck[]; request: AdmissionRequest | undefined } {
  const checks: AdmissionCheck[] = [];
  const check = (id: string, name: string, ok: boolean, detail: string) => checks.push({ id, name, ok, detail });
  const wf = f.workflow;
  const handoff = wf?.handoff ?? null;
  const reviews = wf && handoff ? wf.reviews.filter((r) => r.revision === handoff.revision) : [];
  const latestReview = reviews[reviews.length - 1];
  const consent = wf?.consents[wf.consents.length - 1];

  const verdict = f.suiteTwin.verdict;
  check(
    "1",
    "planner is the executor's reciprocal paired_prompt_id",
    wf !== undefined && verdict?.ok === true && f.suiteTwin.plannerOfRequested === wf.planner,
    wf === undefined && f.requestedPlanner !== undefined
      ? `--planner ${f.requestedPlanner} is not a planner of this run (pairs: ${Object.values(f.state.workflows)
          .map((w) => `${w.planner}→${w.executor}`)
          .join(", ")})`
      : wf === undefined
        ? `${f.requestedExecutor} is the exact twin of no planner in this run (pairs: ${Object.values(f.state.workflows)
            .map((w) => `${w.planner}→${w.executor}`)
            .join(", ")}); Requested: ${f.requestedExecutor}, Result: rejected`
        : f.suiteTwin.problem
          ? f.suiteTwin.problem
          : verdict && !verdict.ok
            ? `${verdict.reason}; ${f.requestedExecutor}'s paired_prompt_id is ${f.suiteTwin.plannerOfRequested ?? "null"}`
            : `requested ${f.requestedExecutor}: its paired_prompt_id is ${f.suiteTwin.plannerOfRequested ?? "null"}; ${wf.planner}'s exact twin is ${f.suiteTwin.twinOfPlanner ?? "none"}`,
  );
  const approved = reviews.filter((r) => r.decision === "approved").pop();
  check(
    "2",
    "the approved review's hash equals the current frozen hash",
    approved !== undefined && handoff !== null && approved.handoff_hash === handoff.hash,
    handoff === null
      ? "nothing is frozen"
      : approved
        ? `approved ${approved.handoff_hash}, frozen ${handoff.hash}`
        : `no approved review of revision ${handoff.revision} (${handoff.hash})`,
  );
  check(
    "3",
    "the latest review of the current revision is approved",
    latestReview?.decision === "approved",
    latestReview
      ? `revision ${latestReview.revision}: ${latestReview.decision} by ${latestReview.reviewer}`
      : `no review of revision ${handoff?.revision ?? 0}`,
  );
  if ("error" in f.rehash) {
    check("4", "no handoff file changed since freezing", false, `cannot re-hash the handoff: ${f.rehash.error}`);
  } else {
    const changes = handoff ? describeChanges(handoff.files, f.rehash.files) : [];
    check(
      "4",
      "no handoff file changed since freezing",
      handoff !== null && f.rehash.hash === handoff.hash,
      handoff === null
        ? "nothing is frozen"
        : f.rehash.hash === handoff.hash
          ? `re-hashed now: ${f.rehash.hash}`
          : `re-hashed now: ${f.rehash.hash}, frozen ${handoff.hash}: ${changes.join(", ") || "content differs"}`,
    );
  }
  check(
    "5",
    "the consent receipt names this exact executor",
    consent !== undefined && consent.decision === "approved" && consent.executor === f.requestedExecutor,
    consent
      ? `consent (${consent.decision}) names ${consent.executor} (${consent.executor_title}); requested ${f.requestedExecutor}`
      : "no consent recorded",
  );
  check(
    "6",
    "the consent is for the current handoff hash",
    consent !== undefined && handoff !== null && consent.handoff_hash === handoff.hash && consent.revision === handoff.revision,
    consent && handoff
      ? `consent for ${consent.handoff_hash} (revision ${consent.revision}), frozen ${handoff.hash} (revision ${handoff.revision})`
      : "no consent or nothing frozen",
  );

  let request: AdmissionRequest | undefined;
  const scope: string[] = [];
  if (consent?.decision !== "approved") scope.push("no granted consent");
  else {
    request = {
      mode: f.requested.mode ?? consent.mode,
      environment: f.requested.environment ?? consent.environment,
      actions: f.requested.actions ?? (consent.actions === "all" ? f.planActionIds : consent.actions),
      budget: consent.budget,
    };
    const dryRunOfConsent = f.purpose === "dry-run" && request.mode === "DRAFT_ONLY";
    if (request.mode !== consent.mode && !dryRunOfConsent) scope.push(`mode ${request.mode} is not the consented ${consent.mode}`);
    // Checked at init-run too; judged again here against the executor file as pinned now.
    if (f.executorModes && f.executorModes.length > 0 && !f.executorModes.includes(request.mode))
      scope.push(`mode ${request.mode} is not one of ${f.requestedExecutor}'s allowed_modes (${f.executorModes.join(", ")})`);
    if (request.environment !== consent.environment)
      scope.push(`environment ${request.environment} is not the consented ${consent.environment}`);
    const notInPlan = request.actions.filter((a) => !f.planActionIds.includes(a));
    if (notInPlan.length) scope.push(`actions ${notInPlan.map((a) => `+ACTION:${a}`).join(", ")} are not in the frozen plan`);
    if (consent.actions !== "all") {
      const outside = request.actions.filter((a) => !(consent.actions as string[]).includes(a));
      if (outside.length) scope.push(`actions ${outside.join(", ")} are outside the consented scope ${consent.actions.join(", ")}`);
    }
    if (request.actions.length === 0) scope.push("no action requested");
    if (consent.budget !== null && request.actions.length > consent.budget)
      scope.push(`${request.actions.length} actions exceed the budget of ${consent.budget}`);
    if (consent.expires_at !== null && f.now.getTime() >= Date.parse(consent.expires_at))
      scope.push(`the consent expired at ${consent.expires_at}`);
    if (consent.consumed_at !== null) scope.push(`the consent was already used by an admission at ${consent.consumed_at}`);
    if (consent.mode === "APPLY_APPROVED") {
      const approval = wf?.apply_approvals.filter((a) => a.consent_hash === receiptHash(consent)).pop();
      if (!approval) scope.push("APPLY_APPROVED needs its apply approval (twinlock approve-apply)");
    }
  }
  check(
    "7",
    "mode (the consented one, allowed by the executor), environment, actions and budget within the consent; not expired; apply approval present",
    scope.length === 0,
    scope.length === 0 && request
      ? `mode ${request.mode}, environment ${request.environment}, actions ${request.actions.join(",")}, budget ${request.budget ?? "unlimited"}${consent?.expires_at ? `, expires ${consent.expires_at}` : ""}`
      : scope.join("; "),
  );
  const open = openStops(f.state, wf?.planner);
  const stops = [
    ...open.map((s) => `!STOP:${s.reason}${s.workflow ? ` (${s.workflow})` : " (run)"}`),
    ...liftsNotNamingTheirStop(f.state, wf?.planner).map(
      (s) => `!STOP:${s.reason} ${s.seq}${s.workflow ? ` (${s.workflow})` : " (run)"} (lifted by a receipt that does not name it)`,
    ),
    ...f.untrustedStopLifts.map((s) => `${s} (lifted without a trusted signature)`),
  ];
  check("8", "no unresolved !STOP on the run or the workflow", stops.length === 0, stops.length ? stops.join(", ") : "none");
  check(
    "pair",
    "the suite's pair metadata is unchanged since the run began",
    wf !== undefined && f.suiteTwin.pairDigest === wf.pair_digest,
    wf === undefined
      ? "no workflow"
      : f.suiteTwin.pairDigest === wf.pair_digest
        ? `digest ${wf.pair_digest}`
        : `the pairing changed (run began with ${wf.pair_digest}, suite now ${f.suiteTwin.pairDigest ?? "does not resolve"}); a changed pairing needs a new run`,
  );
  check(
    "pin",
    "the run's suite is pinned in the gate home; its twinlock.yaml and the pair's prompt files are unchanged since pinning",
    f.pin.ok,
    f.pin.detail,
  );
  check(
    "frozen",
    "the frozen bytes in the gate home are intact",
    handoff !== null && f.frozenBytes.length === 0,
    handoff === null
      ? "nothing is frozen"
      : f.frozenBytes.length
        ? f.frozenBytes.join("; ")
        : `${handoff.files.length} files, ${handoff.hash}`,
  );
  const decided = wf ? standingDecisions(wf) : [];
  const { otherPolicy, otherExecutor } = decisionsOutside(decided, f.policyDigestNow, f.executorDigestNow);
  check(
    "policy",
    "the review and consent were made under the pinned policy as it is now",
    decided.length > 0 && f.policyDigestNow !== null && otherPolicy.length === 0,
    f.policyDigestNow === null
      ? "the pinned policy cannot be read"
      : otherPolicy.length
        ? `${otherPolicy.map((r) => `${r.kind} under ${r.policy_digest}`).join(", ")}; policy now ${f.policyDigestNow}: the policy changed since the decision`
        : `policy ${f.policyDigestNow}`,
  );
  check(
    "executor-file",
    "the executor prompt file is byte for byte the one reviewed and consented to",
    decided.length > 0 && f.executorDigestNow !== null && otherExecutor.length === 0,
    f.executorDigestNow === null
      ? "the executor prompt file cannot be read"
      : otherExecutor.length
        ? `${otherExecutor.map((r) => `${r.kind} for ${r.executor_digest}`).join(", ")}; file now ${f.executorDigestNow}: the executor prompt changed since the decision`
        : `the pair's executor file is still ${f.executorDigestNow}`,
  );
  check(
    "consumed",
    "the gate home has no record of this consent being used",
    f.consumedInHome === undefined,
    f.consumedInHome ? `used by an admission at ${f.consumedInHome.at} (run ${f.consumedInHome.run_id})` : "unused",
  );
  const applying = request !== undefined && isApplyMode(request.mode);
  const passedOfThisHash = wf ? passedDryRuns(wf) : [];
  const passedDryRun = passedOfThisHash.find((d) => d.result_receipt !== null && f.distrustDryRunResult(d.result_receipt) === undefined);
  const distrusted = passedOfThisHash
    .map((d) => (d.result_receipt ? f.distrustDryRunResult(d.result_receipt) : "no receipt"))
    .find(Boolean);
  check(
    "dry-run",
    "an executor with dry_run_required has a passed dry run of this hash before it applies",
    f.purpose === "dry-run" || !f.dryRunRequired || !applying || passedDryRun !== undefined,
    f.purpose === "dry-run"
      ? "this is the dry run (DRAFT_ONLY; the consent is not used)"
      : !f.dryRunRequired
        ? `${f.requestedExecutor} does not declare dry_run_required`
        : !applying
          ? `mode ${request?.mode ?? "none"} does not apply`
          : passedDryRun
            ? `dry run of revision ${passedDryRun.revision} passed at ${passedDryRun.result_at} (judged by ${passedDryRun.result_receipt?.by})`
            : distrusted
              ? `${f.requestedExecutor} declares dry_run_required, and the passed result is not trusted: ${distrusted}`
              : `${f.requestedExecutor} declares dry_run_required: record a dry run of revision ${handoff?.revision ?? 0} and its passed result first (twinlock dry-run, then dry-run-result)`,
  );
  check(
    "chain",
    "the event chain verifies and is the gate home's checkpoint",
    f.chain.ok,
    f.chain.ok ? `${f.state.run_id}: ${Object.keys(f.state.workflows).length} workflow(s)` : f.chain.reason,
  );
  check(
    "state",
    "the workflow is dry_run_ready",
    wf?.state === "dry_run_ready",
    wf === undefined || wf.state === "dry_run_ready"
      ? `state ${wf?.state ?? "none"}`
      : `state ${wf.state}; ${legalNextStep(describeNextStep(wf.state, { run: f.runFile ?? "RUN", planner: wf.planner, executor: wf.executor, hash: wf.handoff?.hash }))}`,
  );
  return { checks, request };
}

/** The files added, changed or removed between two manifests, as short phrases. */
/** Modes that change a system: an executor declaring `dry_run_required` is admitted in them only after a passed dry run. */
export function isApplyMode(mode: string): boolean {
  return mode === "APPLY_SAFE" || mode === "APPLY_APPROVED";
}

/** The dry runs of the workflow's current frozen hash and revision whose result was recorded as passed (receipts not yet judged). */
export function passedDryRuns(wf: Workflow): Workflow["dry_runs"] {
  const handoff = wf.handoff;
  return wf.dry_runs.filter(
    (d) => handoff !== null && d.handoff_hash === handoff.hash && d.revision === handoff.revision && d.result === "passed",
  );
}

/** The stops not yet resolved that hold back the pair of `planner`: those on the whole run and those on that pair. */
export function openStops(state: RunState, planner: string | undefined): RunState["stops"] {
  return state.stops.filter((s) => s.resolved_at === null && (s.workflow === null || s.workflow === planner));
}

/**
 * The lifted stops holding back the pair of `planner` whose lift receipt does
 * not name them (by their number, with their reason and, when it names one,
 * their workflow). Replay lifts only the stops a receipt names; admission
 * checks it again on the state it is given.
 */
export function liftsNotNamingTheirStop(state: RunState, planner: string | undefined): RunState["stops"] {
  return state.stops.filter((s) => {
    if (s.resolved_at === null || (s.workflow !== null && s.workflow !== planner)) return false;
    const r = s.resolution_receipt;
    return (
      r === null ||
      r.run_id !== state.run_id ||
      r.reason !== s.reason ||
      (r.workflow !== null && r.workflow !== s.workflow) ||
      !namesSeq(r.stops, s.seq)
    );
  });
}

/** Whether an ascending list of stop numbers (as replay requires a lift's) holds `seq`: a binary search. */
function namesSeq(stops: readonly number[], seq: number): boolean {
  let lo = 0;
  let hi = stops.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = stops[mid] as number;
    if (v === seq) return true;
    if (v < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** The decisions an admission stands on: the approved reviews of the frozen revision, and the latest consent. */
export function standingDecisions(wf: Workflow): Array<Workflow["reviews"][number] | Workflow["consents"][number]> {
  const handoff = wf.handoff;
  const consent = wf.consents[wf.consents.length - 1];
  return [
    ...(handoff ? wf.reviews.filter((r) => r.revision === handoff.revision && r.decision === "approved") : []),
    ...(consent ? [consent] : []),
  ];
}

/**
 * Those of `decided` made under another policy than `policyDigest`, and for
 * another executor file than `executorDigest` (null: it cannot be read, so
 * every decision is outside it): admission's `policy` and `executor-file`
 * checks, and what a re-pin voided.
 */
export function decisionsOutside<T extends { policy_digest: string; executor_digest: string }>(
  decided: readonly T[],
  policyDigest: string | null,
  executorDigest: string | null,
): { otherPolicy: T[]; otherExecutor: T[] } {
  return {
    otherPolicy: decided.filter((r) => r.policy_digest !== policyDigest),
    otherExecutor: decided.filter((r) => r.executor_digest !== executorDigest),
  };
}

export function describeChanges(frozen: ManifestEntry[], now: ManifestEntry[]): string[] {
  const before = new Map(frozen.map((f) => [f.path, f.sha256]));
  const after = new Map(now.map((f) => [f.path, f.sha256]));
  const out: string[] = [];
  for (const [p, h] of after) {
    if (!before.has(p)) out.push(`added ${p}`);
    else if (before.get(p) !== h) out.push(`changed ${p}`);
  }
  for (const p of before.keys()) if (!after.has(p)) out.push(`removed ${p}`);
  return out;
}
