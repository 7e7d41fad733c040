import type { KeyObject } from "node:crypto";
import { ConflictError, IntegrityError, RefusalError } from "../errors/errors.js";
import { hashHandoff } from "../handoff/hash-handoff.js";
import type { ConsumedConsent } from "../home/consumed-consents.js";
import { checkoutFrozenBytes, requireCheckoutTarget, verifyFrozenBytes } from "../home/frozen-bytes.js";
import { frozenActionIds } from "../home/frozen-records.js";
import { gateFolders } from "../home/gate-folders.js";
import { loadPinnedPolicy, type PinnedSuite } from "../home/suite-pins.js";
import { type AdmissionFacts, type AdmissionRequest, runAdmissionChecks } from "../run/admission-checks.js";
import { receiptHash } from "../run/receipt-hash.js";
import { RECEIPT_KINDS } from "../run/receipt-kinds.js";
import type { AdmissionCheck, AdmissionReceipt, DryRunResult, RunFile, RunState, Workflow } from "../run/run-schema.js";
import { verifyRunFile } from "../store/run-file.js";
import { handoffPathOf, type RunStore } from "../store/run-store.js";
import type { Mode } from "../suite/prompt.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { judgeReceiptTrust } from "../trust/judge-receipt-trust.js";
import { sealReceipt } from "../trust/seal-receipt.js";
import { personForKey } from "../trust/sign-as-reviewer.js";
import { trustChecks } from "../trust/trust-checks.js";
import { pairDigest } from "../twin/pair-digest.js";
import { judgeRequestedExecutor, resolveExactTwin } from "../twin/resolve-exact-twin.js";
import { requireActionIds } from "./action-scope.js";
import { declaresDryRun } from "./dry-run-needed.js";
import { executorDigest, loadRunSuite } from "./load-run-suite.js";

export interface AdmitInput {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  executor: string;
  planner?: string;
  mode?: Mode;
  environment?: string;
  actions?: string[];
  /** Report without recording anything. */
  dry?: boolean;
  /** After admission, write the read-only copy of the approved bytes here. */
  checkout?: string;
  /**
   * "dry-run": record a dry run of the consented plan instead (every check, in
   * DRAFT_ONLY, the consent not used, the workflow stays ready), which an
   * executor declaring `dry_run_required` needs, with a passed result, before
   * it is admitted to apply.
   */
  purpose?: "admit" | "dry-run";
  actor: string;
  now?: () => Date;
}

export interface AdmitResult {
  admitted: boolean;
  dry: boolean;
  planner: string | null;
  executor: string;
  checks: AdmissionCheck[];
  request?: AdmissionRequest;
  receipt?: AdmissionReceipt;
  /** The suite was pinned with --allow-unsigned: receipts prove nothing about who decided. */
  unsigned: boolean;
  /** Where the approved bytes were checked out, when asked. */
  checkout?: string;
  /** When the pair is already executing: when its consent was used by the admission that moved it there. */
  executingSince?: string;
}

/** What admission gathers before deciding: everything outside the run file. */
interface Gathered {
  pinned: PinnedSuite | undefined;
  pinProblem: string | undefined;
  dryRunRequired: boolean;
  executorModes: readonly Mode[] | undefined;
  rehash: AdmissionFacts["rehash"];
  frozenBytes: string[];
  actionIds: string[];
  executorDigestNow: string | null;
  /** The store's record that the latest consent was already used (by any copy of the run), if it was. */
  consumed: ConsumedConsent | undefined;
}

/**
 * Executor admission (SPEC §5, §9): gather the pinned suite, the live
 * handoff re-hashed, the frozen bytes and the home's records; then run every
 * check against the run as the home knows it. On any failure nothing
 * changes; on success an admission receipt is recorded, the consent is
 * consumed in the home, the workflow moves to `executing`, and (if asked)
 * the approved bytes are checked out read-only. The only way to `executing`.
 */
export async function admit(input: AdmitInput): Promise<AdmitResult> {
  const now = input.now ?? (() => new Date());
  // A checkout that could not be written must be refused before the consent is used, not after.
  if (input.checkout !== undefined) requireCheckoutTarget(input.store.home, input.checkout);
  if (input.actions !== undefined) requireActionIds(input.actions);
  let loaded: { file: RunFile; state: RunState } | undefined;
  let chain: AdmissionFacts["chain"] = { ok: true };
  try {
    loaded = await input.store.read(input.run);
  } catch (error) {
    if (!(error instanceof IntegrityError)) throw error;
    const file = await input.store.readUnverified(input.run);
    const verdict = verifyRunFile(file);
    chain = { ok: false, reason: verdict.ok ? error.message : verdict.reason };
    loaded = { file, state: verdict.ok ? verdict.state : file.state };
  }
  const wf0 = pickWorkflow(loaded.state, input.executor, input.planner);
  const gathered = await gather(input, loaded.state, wf0);
  const report = (wf: Workflow | undefined, checks: AdmissionCheck[], request?: AdmissionRequest): AdmitResult => ({
    admitted: false,
    dry: input.dry === true,
    planner: wf?.planner ?? null,
    executor: input.executor,
    checks,
    unsigned: gathered.pinned?.unsigned ?? false,
    ...(request ? { request } : {}),
    ...(wf?.state === "executing" && wf.consents.at(-1)?.consumed_at ? { executingSince: wf.consents.at(-1)?.consumed_at as string } : {}),
  });
  const first = evaluate(input, loaded.state, wf0, gathered, chain, now());
  const allPass = first.checks.every((c) => c.ok);
  // A dry run reports whether it would admit; nothing is recorded either way.
  if (!chain.ok || input.dry || !allPass) return { ...report(wf0, first.checks, first.request), admitted: input.dry === true && allPass };
  const headSeen = loaded.file.head;
  const { result } = await input.store.update(
    input.run,
    (current) => {
      // The run as the home knows it now decides: a change that makes a check fail (a stop that landed first) is a
      // refusal naming that check; any other change since the facts were gathered is a conflict.
      const r = evaluate(input, current.state, pickWorkflow(current.state, input.executor, input.planner), gathered, { ok: true }, now());
      if (!r.wf || !r.request || !r.checks.every((c) => c.ok)) return { events: [], result: report(r.wf, r.checks, r.request) };
      if (current.file.head !== headSeen)
        throw new ConflictError(`run file ${input.run} changed while admission was checking it; run admit again`);
      const wf = r.wf;
      const consent = wf.consents[wf.consents.length - 1] as Workflow["consents"][number];
      const handoff = wf.handoff as NonNullable<Workflow["handoff"]>;
      const receipt: AdmissionReceipt = {
        kind: "admission",
        run_id: current.state.run_id,
        planner: wf.planner,
        executor: wf.executor,
        handoff_hash: handoff.hash,
        revision: handoff.revision,
        consent_hash: receiptHash(consent),
        requested: r.request,
        checks: r.checks,
        actor: input.actor,
        at: now().toISOString(),
      };
      const admitted: AdmitResult = { ...report(wf, r.checks, r.request), admitted: true, receipt };
      const type = input.purpose === "dry-run" ? "dry_run_admitted" : "admitted";
      return { events: [{ type, actor: input.actor, data: { planner: wf.planner, receipt } }], result: admitted };
    },
    { now },
  );
  if (result.admitted && input.checkout !== undefined) {
    const wf = pickWorkflow(loaded.state, input.executor, input.planner) as Workflow;
    try {
      result.checkout = checkoutFrozenBytes(input.store.home, (wf.handoff as NonNullable<Workflow["handoff"]>).files, input.checkout);
    } catch (error) {
      // Admission is recorded and the consent used; the approved bytes can still be written elsewhere.
      throw new RefusalError(
        `admitted ${wf.executor} for ${wf.planner} (the consent is used), but the checkout to ${input.checkout} could not be written: ${(error as Error).message}; write it with \`twinlock checkout ${input.run} ${wf.executor} DIR\` before the executor starts`,
        { admitted: true },
        { cause: error },
      );
    }
  }
  return result;
}

/** Everything outside the run file, read once before any lock. */
async function gather(input: AdmitInput, state: RunState, wf: Workflow | undefined): Promise<Gathered> {
  let pinned: PinnedSuite | undefined;
  let pinProblem: string | undefined;
  try {
    pinned = loadRunSuite(input.store.home, state, undefined, [input.executor]);
  } catch (error) {
    if (!(error instanceof RefusalError) && !(error instanceof IntegrityError)) throw error;
    pinProblem = error.message;
  }
  const consent = wf?.consents[wf.consents.length - 1];
  let executorDigestNow: string | null = null;
  if (pinned && wf) {
    try {
      executorDigestNow = executorDigest(pinned, wf);
    } catch {
      executorDigestNow = null;
    }
  }
  return {
    pinned,
    pinProblem,
    dryRunRequired: wf !== undefined && declaresDryRun(pinned?.suite.byId.get(wf.executor)),
    executorModes: wf === undefined ? undefined : pinned?.suite.byId.get(wf.executor)?.allowedModes,
    // A finished pair admits nothing: its recorded folder is not read (an imported run's folder may name anything).
    rehash:
      wf?.handoff && wf.state !== "closed" && wf.state !== "failed"
        ? await rehash(handoffPathOf(input.store, input.run, wf.handoff.dir, state.suite.root), gateFolders(input.store.home))
        : { error: wf?.handoff ? `${wf.planner} is ${wf.state}` : "nothing is frozen" },
    frozenBytes: wf?.handoff ? verifyFrozenBytes(input.store.home, wf.handoff.files) : [],
    actionIds: wf?.handoff && pinned ? frozenActionIds(input.store.home, wf.handoff.files, pinned.handoffFormat) : [],
    executorDigestNow,
    consumed: consent ? await input.store.findConsumedConsent(receiptHash(consent)) : undefined,
  };
}

/** The pure decision over the gathered facts and the run's state. */
function evaluate(
  input: AdmitInput,
  state: RunState,
  wf: Workflow | undefined,
  g: Gathered,
  chain: AdmissionFacts["chain"],
  now: Date,
): { wf: Workflow | undefined; checks: AdmissionCheck[]; request?: AdmissionRequest } {
  const config: SuiteConfig = g.pinned?.config ?? { policies: { require_signed_receipts: true } };
  const consent = wf?.consents[wf.consents.length - 1];
  // Gathered before the lock: the decision under the lock re-runs only on the very state gathered (same head).
  const consumed = consent ? g.consumed : undefined;
  const untrustedStopLifts = state.stops
    .filter((s) => s.resolved_at !== null && (s.workflow === null || s.workflow === wf?.planner))
    .flatMap((s) => {
      if (!s.resolution_receipt) return [`!STOP:${s.reason}`];
      const verdict = judgeReceiptTrust(s.resolution_receipt, RECEIPT_KINDS.stop_resolution.right, config);
      return verdict.ok ? [] : [`!STOP:${s.reason}: ${verdict.reason}`];
    });
  const facts: AdmissionFacts = {
    state,
    workflow: wf,
    requestedExecutor: input.executor,
    runFile: input.run,
    requestedPlanner: input.planner,
    suiteTwin: suiteFacts(g.pinned, g.pinProblem, wf, input.executor),
    rehash: g.rehash,
    planActionIds: g.actionIds,
    requested: { mode: input.purpose === "dry-run" ? "DRAFT_ONLY" : input.mode, environment: input.environment, actions: input.actions },
    chain,
    pin: g.pinned
      ? {
          ok: true,
          detail: `${g.pinned.pin.suite_id} at ${g.pinned.pin.root}, ${g.pinned.policyDigest}${g.pinned.unsigned ? " (UNSIGNED)" : ""}`,
        }
      : { ok: false, detail: g.pinProblem ?? "not pinned" },
    frozenBytes: g.frozenBytes,
    consumedInHome: consumed,
    policyDigestNow: g.pinned?.policyDigest ?? null,
    executorDigestNow: g.executorDigestNow,
    untrustedStopLifts,
    dryRunRequired: g.dryRunRequired,
    executorModes: g.executorModes,
    distrustDryRunResult: (r) => {
      const v = judgeReceiptTrust(r, RECEIPT_KINDS.dry_run_result.right, config);
      return v.ok ? undefined : v.reason;
    },
    purpose: input.purpose ?? "admit",
    now,
  };
  const result = runAdmissionChecks(facts);
  return { wf, checks: [...result.checks, ...trustChecks(wf, config)], request: result.request };
}

function pickWorkflow(state: RunState, executor: string, planner?: string): Workflow | undefined {
  const all = Object.values(state.workflows);
  if (planner !== undefined) return state.workflows[planner];
  return all.find((w) => w.executor === executor) ?? (all.length === 1 ? all[0] : undefined);
}

function suiteFacts(
  pinned: PinnedSuite | undefined,
  pinProblem: string | undefined,
  wf: Workflow | undefined,
  requested: string,
): AdmissionFacts["suiteTwin"] {
  if (!pinned)
    return {
      plannerOfRequested: null,
      twinOfPlanner: null,
      verdict: null,
      pairDigest: null,
      problem: pinProblem ?? "the suite is not pinned",
    };
  const suite = pinned.suite;
  const requestedPrompt = suite.byId.get(requested);
  const resolved = wf ? resolveExactTwin(suite, wf.planner) : undefined;
  const pinnedTwin = wf ? pinned.pin.pairs[wf.planner] : undefined;
  const twinOk = resolved?.ok === true && pinnedTwin === resolved.twin.executor.id;
  return {
    plannerOfRequested: requestedPrompt?.pairedPromptId ?? null,
    twinOfPlanner: resolved?.ok ? resolved.twin.executor.id : null,
    verdict: resolved?.ok && twinOk ? judgeRequestedExecutor(resolved.twin, requested) : null,
    pairDigest: resolved?.ok && twinOk ? pairDigest(resolved.twin.planner, resolved.twin.executor) : null,
    ...(requestedPrompt ? {} : { problem: `${requested} is not a prompt of the pinned suite ${pinned.pin.suite_id}` }),
    ...(resolved && !resolved.ok ? { problem: `${wf?.planner} no longer resolves to an exact twin: ${resolved.reasons.join("; ")}` } : {}),
    ...(resolved?.ok && !twinOk
      ? {
          problem: `${wf?.planner} is paired with ${resolved.twin.executor.id} now, but with ${pinnedTwin ?? "nothing"} in the pin; re-pin after reviewing the change`,
        }
      : {}),
  };
}

/** The live handoff re-hashed by the freeze's own rules (no link as the folder, never the gate home or a key folder). */
async function rehash(dir: string, keepApart: readonly string[]): Promise<AdmissionFacts["rehash"]> {
  try {
    return await hashHandoff(dir, keepApart);
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/**
 * Record a person's reading of the open dry run of an executor's current plan
 * (passed or failed, with a note). On signing suites it is signed by a key
 * with the `apply` right: a passed dry run is a decision admission relies on,
 * so the agent cannot record one for itself.
 */
export async function recordDryRunResult(input: {
  /** Where the run lives. */
  store: RunStore;
  /** The run, as the store names it (the folder store: the run file's path). */
  run: string;
  executor: string;
  result: "passed" | "failed";
  note: string;
  actor?: string;
  key?: KeyObject;
  now?: () => Date;
}): Promise<{ workflow: Workflow; receipt: DryRunResult }> {
  const policy = loadPinnedPolicy(input.store.home, (await input.store.read(input.run)).state.suite);
  const person = personForKey(input.key, input.actor, policy.config, "--actor");
  const { run, result } = await input.store.update(
    input.run,
    (current) => {
      const wf = pickWorkflow(current.state, input.executor);
      if (!wf) throw new RefusalError(`${input.executor} is the executor of no pair in this run`, {}, { code: "UNKNOWN_PAIR" });
      const open = wf.dry_runs[wf.dry_runs.length - 1];
      if (!wf.handoff || !open || open.result !== null || open.handoff_hash !== wf.handoff.hash)
        throw new RefusalError(
          `${input.executor} has no open dry run of revision ${wf.revision}; record one with \`twinlock dry-run\` first`,
          {},
          { code: "NO_OPEN_DRY_RUN" },
        );
      const unsigned: DryRunResult = {
        kind: "dry_run_result",
        run_id: current.state.run_id,
        planner: wf.planner,
        executor: wf.executor,
        handoff_hash: wf.handoff.hash,
        revision: wf.handoff.revision,
        result: input.result,
        note: input.note,
        by: person,
        at: (input.now?.() ?? new Date()).toISOString(),
      };
      const receipt = sealReceipt(unsigned, {
        key: input.key,
        person,
        right: "apply",
        config: policy.config,
        what: "judge the dry run of",
      });
      return { events: [{ type: "dry_run_result", actor: person, data: { planner: wf.planner, receipt } }], result: receipt };
    },
    { now: input.now },
  );
  return { workflow: Object.values(run.state.workflows).find((w) => w.executor === input.executor) as Workflow, receipt: result };
}
