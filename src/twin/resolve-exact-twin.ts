import { hasErrors } from "../diagnostics/diagnostic.js";
import type { Suite } from "../suite/load-suite.js";
import type { Prompt } from "../suite/prompt.js";
import { checkPairMember } from "./check-pair-member.js";

/** A planner and the one executor the suite allows it. */
export interface ExactTwin {
  planner: Prompt;
  executor: Prompt;
}

export type TwinResolution = { ok: true; twin: ExactTwin } | { ok: false; reasons: string[] };

/**
 * The one place that decides a planner's exact twin. The planner must be a
 * paired `investigative` prompt, its `paired_prompt_id` must name an
 * `executive` prompt that names it back, and both must carry the canonical
 * metadata of SPEC §2 with no override keys. There is no fallback: any doubt
 * is a refusal listing its reasons.
 */
export function resolveExactTwin(suite: Suite, plannerId: string): TwinResolution {
  const planner = suite.byId.get(plannerId);
  if (!planner) return { ok: false, reasons: [`${plannerId} is not a prompt of the suite at ${suite.root}`] };
  if (planner.role !== "investigative") {
    return {
      ok: false,
      reasons: [`${plannerId} has prompt_role ${planner.role ?? "(none)"}; only a paired investigative planner has an exact twin`],
    };
  }
  if (planner.pairedPromptId === null) return { ok: false, reasons: [`${plannerId} declares no paired_prompt_id`] };
  const reasons: string[] = [];
  for (const id of [plannerId, planner.pairedPromptId]) {
    const files = suite.duplicates.get(id);
    if (files) reasons.push(`${id} is declared by ${files.length} files (${files.map((p) => p.file).join(", ")})`);
  }
  const executor = suite.byId.get(planner.pairedPromptId);
  const problems = [...checkPairMember(suite, planner), ...(executor ? checkPairMember(suite, executor) : [])];
  if (hasErrors(problems)) reasons.push(...problems.filter((d) => d.severity === "error").map((d) => d.message));
  if (reasons.length > 0 || !executor) return { ok: false, reasons };
  return { ok: true, twin: { planner, executor } };
}

/** The result of asking whether `requestedId` may execute `twin.planner`'s plan. */
export type ExecutorVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

const ACCEPTED: ExecutorVerdict = Object.freeze({ ok: true });

/**
 * The one executor ID the runtime accepts for a twin. `judgeRequestedExecutor`
 * accepts this string, byte for byte, and nothing else — which is what lets
 * `validate` prove the refusal property per pair instead of per pair × executive.
 */
export function acceptedExecutorId(twin: ExactTwin): string {
  return twin.executor.id;
}

/**
 * Accept exactly the twin's ID, byte for byte; refuse everything else, in
 * the source's words (`Requested: MD-28, Required exact twin: MD-30`).
 * Similarity, category, keywords or preference never make another twin.
 * The reason is built only when read.
 */
export function judgeRequestedExecutor(twin: ExactTwin, requestedId: string): ExecutorVerdict {
  return requestedId === acceptedExecutorId(twin) ? ACCEPTED : new Refusal(twin, requestedId);
}

/** A refusal whose reason is written out only when someone reads it. */
class Refusal {
  readonly ok = false as const;
  constructor(
    private readonly twin: ExactTwin,
    private readonly requestedId: string,
  ) {}
  get reason(): string {
    const { planner, executor } = this.twin;
    return `Requested: ${this.requestedId}; Required exact twin: ${executor.id} (${executor.title ?? "untitled"}); Result: rejected — only ${planner.id}'s paired_prompt_id may execute its plan`;
  }
}
