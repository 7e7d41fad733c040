import type { ManifestEntry } from "../../handoff/hash-handoff.js";
import type { Mode } from "../../suite/prompt.js";
import type { AdmissionReceipt, DryRunResult, RunState, StopResolution, Workflow } from "../run-schema.js";

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
 * An admission as a run records it, for CI to re-judge offline (SPEC §5):
 * the state just before its `admitted` event, and what the event says.
 */
export interface RecordedAdmission {
  /** The state the events before the admission replay to. */
  state: RunState;
  planner: string;
  workflow: Workflow;
  receipt: AdmissionReceipt;
  /** The consent the receipt names, found in the workflow by its hash; undefined when none is. */
  consent: Workflow["consents"][number] | undefined;
  /** The later of the event's and the receipt's times (a hand-made admission may set either), in ms. */
  when: number;
  /** How many admissions of the run so far (this one included) name the receipt's consent. */
  uses: number;
  /** Why a stop's lift receipt is not trusted with the `stop` right under the pinned policy, or undefined when it is. */
  distrustStopLift: (receipt: StopResolution) => string | undefined;
}

/**
 * One admission check (issue 25: a registry of small modules that admission
 * and CI share). `judge` is admission's verdict on the facts now; `rejudge`
 * is CI's, from the run alone, or `{offline}` saying why it cannot be judged
 * from the run alone. `reads` names every fact `judge` reads
 * (src/gate/admit.test.ts holds it to what it reads).
 */
export interface AdmissionCheckModule {
  id: string;
  name: string;
  reads: readonly (keyof AdmissionFacts)[];
  judge(f: AdmissionFacts): { ok: boolean; detail: string };
  rejudge: ((r: RecordedAdmission) => string[]) | { offline: string };
}

/** The frozen handoff of the workflow admitted, or null. */
export function frozenHandoff(f: AdmissionFacts): Workflow["handoff"] {
  return f.workflow?.handoff ?? null;
}

/** The reviews of the current frozen revision, oldest first. */
export function currentReviews(f: AdmissionFacts): Workflow["reviews"] {
  const handoff = frozenHandoff(f);
  return f.workflow && handoff ? f.workflow.reviews.filter((r) => r.revision === handoff.revision) : [];
}

/** The workflow's latest consent, if any. */
export function latestConsent(f: AdmissionFacts): Workflow["consents"][number] | undefined {
  const wf = f.workflow;
  return wf?.consents[wf.consents.length - 1];
}

/** The request admission records: what was asked, filled with the granted consent's values; undefined without a granted consent. */
export function requestOf(f: AdmissionFacts): AdmissionRequest | undefined {
  const consent = latestConsent(f);
  if (consent?.decision !== "approved") return undefined;
  return {
    mode: f.requested.mode ?? consent.mode,
    environment: f.requested.environment ?? consent.environment,
    actions: f.requested.actions ?? (consent.actions === "all" ? f.planActionIds : consent.actions),
    budget: consent.budget,
  };
}
