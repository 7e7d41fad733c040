import path from "node:path";
import { IntegrityError } from "../errors/errors.js";
import { hashHandoff } from "../handoff/hash-handoff.js";
import { type AdmissionFacts, type AdmissionRequest, runAdmissionChecks } from "../run/admission-checks.js";
import { planActionIds } from "../run/plan-action-ids.js";
import { receiptHash } from "../run/receipt-hash.js";
import type { AdmissionCheck, AdmissionReceipt, RunEvent, RunState, Workflow } from "../run/run-schema.js";
import { readRunFile, readRunFileUnverified, updateRunFile, verifyRunFile } from "../store/run-store.js";
import { loadSuite } from "../suite/load-suite.js";
import type { Mode } from "../suite/prompt.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { loadPolicyConfig } from "../trust/load-policy-config.js";
import { trustChecks } from "../trust/trust-checks.js";
import { pairDigest } from "../twin/pair-digest.js";
import { judgeRequestedExecutor, resolveExactTwin } from "../twin/resolve-exact-twin.js";

export interface AdmitInput {
  runFile: string;
  executor: string;
  planner?: string;
  mode?: Mode;
  environment?: string;
  actions?: string[];
  /** Report without recording anything. */
  dry?: boolean;
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
}

/**
 * Executor admission (SPEC §5): run every check against the run file, the
 * suite and the handoff as they are now. On any failure nothing changes; on
 * success an admission receipt is recorded, the consent is consumed and the
 * workflow moves to `executing`. This is the only way to reach `executing`.
 */
export async function admit(input: AdmitInput): Promise<AdmitResult> {
  const now = input.now ?? (() => new Date());
  const runDir = path.dirname(path.resolve(input.runFile));
  const evaluate = async (state: RunState, events: readonly RunEvent[], chain: AdmissionFacts["chain"]) => {
    const wf = pickWorkflow(state, input.executor, input.planner);
    const facts: AdmissionFacts = {
      state,
      workflow: wf,
      requestedExecutor: input.executor,
      requestedPlanner: input.planner,
      suiteTwin: suiteFacts(state, wf, input.executor),
      rehash: wf?.handoff ? await rehash(path.resolve(runDir, wf.handoff.dir)) : { error: "nothing is frozen" },
      planActionIds: wf ? planActionIds(events, wf) : [],
      requested: { mode: input.mode, environment: input.environment, actions: input.actions },
      chain,
      now: now(),
    };
    const result = runAdmissionChecks(facts);
    return { wf, checks: [...result.checks, ...trustChecks(wf, suiteConfig(state))], request: result.request };
  };
  const failed = (wf: Workflow | undefined, checks: AdmissionCheck[], request?: AdmissionRequest): AdmitResult => ({
    admitted: false,
    dry: input.dry === true,
    planner: wf?.planner ?? null,
    executor: input.executor,
    checks,
    ...(request ? { request } : {}),
  });

  let verified: ReturnType<typeof readRunFile> | undefined;
  try {
    verified = input.dry ? readRunFile(input.runFile) : undefined;
  } catch (error) {
    if (!(error instanceof IntegrityError)) throw error;
    return brokenChainReport(input, error, evaluate, failed);
  }
  if (verified) {
    const r = await evaluate(verified.state, verified.file.events, { ok: true });
    return { ...failed(r.wf, r.checks, r.request), admitted: r.checks.every((c) => c.ok) };
  }
  try {
    const { result } = await updateRunFile(
      input.runFile,
      async (current) => {
        const r = await evaluate(current.state, current.file.events, { ok: true });
        if (!r.wf || !r.request || !r.checks.every((c) => c.ok)) return { events: [], result: failed(r.wf, r.checks, r.request) };
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
        const admitted: AdmitResult = {
          admitted: true,
          dry: false,
          planner: wf.planner,
          executor: input.executor,
          checks: r.checks,
          request: r.request,
          receipt,
        };
        return { events: [{ type: "admitted", actor: input.actor, data: { planner: wf.planner, receipt } }], result: admitted };
      },
      { now },
    );
    return result;
  } catch (error) {
    if (!(error instanceof IntegrityError)) throw error;
    return brokenChainReport(input, error, evaluate, failed);
  }
}

/** With a broken chain, still report every check from the stored (untrusted) state, the chain check failing. */
async function brokenChainReport(
  input: AdmitInput,
  error: IntegrityError,
  evaluate: (
    s: RunState,
    e: readonly RunEvent[],
    c: AdmissionFacts["chain"],
  ) => Promise<{ wf: Workflow | undefined; checks: AdmissionCheck[]; request?: AdmissionRequest }>,
  failed: (wf: Workflow | undefined, checks: AdmissionCheck[], request?: AdmissionRequest) => AdmitResult,
): Promise<AdmitResult> {
  const file = readRunFileUnverified(input.runFile);
  const verdict = verifyRunFile(file);
  const reason = verdict.ok ? error.message : verdict.reason;
  const r = await evaluate(file.state, file.events, { ok: false, reason });
  return failed(r.wf, r.checks, r.request);
}

function pickWorkflow(state: RunState, executor: string, planner?: string): Workflow | undefined {
  const all = Object.values(state.workflows);
  if (planner !== undefined) return state.workflows[planner];
  return all.find((w) => w.executor === executor) ?? (all.length === 1 ? all[0] : undefined);
}

function suiteFacts(state: RunState, wf: Workflow | undefined, requested: string): AdmissionFacts["suiteTwin"] {
  try {
    const suite = loadSuite(state.suite.root);
    const requestedPrompt = suite.byId.get(requested);
    const resolved = wf ? resolveExactTwin(suite, wf.planner) : undefined;
    return {
      plannerOfRequested: requestedPrompt?.pairedPromptId ?? null,
      twinOfPlanner: resolved?.ok ? resolved.twin.executor.id : null,
      verdict: resolved?.ok ? judgeRequestedExecutor(resolved.twin, requested) : null,
      pairDigest: resolved?.ok ? pairDigest(resolved.twin.planner, resolved.twin.executor) : null,
      ...(requestedPrompt ? {} : { problem: `${requested} is not a prompt of the suite at ${state.suite.root}` }),
      ...(resolved && !resolved.ok
        ? { problem: `${wf?.planner} no longer resolves to an exact twin: ${resolved.reasons.join("; ")}` }
        : {}),
    };
  } catch (error) {
    return {
      plannerOfRequested: null,
      twinOfPlanner: null,
      verdict: null,
      pairDigest: null,
      problem: `cannot load the suite at ${state.suite.root}: ${(error as Error).message}`,
    };
  }
}

async function rehash(dir: string): Promise<AdmissionFacts["rehash"]> {
  try {
    return await hashHandoff(dir);
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** The suite's config as it is now; one that cannot be trusted (gone, invalid, another suite) trusts no receipt. */
function suiteConfig(state: RunState): SuiteConfig {
  try {
    return loadPolicyConfig(state.suite);
  } catch {
    // Fail closed: require signatures from reviewers nobody is listed as.
    return { policies: { require_signed_receipts: true } };
  }
}
