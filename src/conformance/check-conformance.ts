import type { ActionRecord, CriterionRecord } from "../handoff/handoff-model.js";
import { actionTargetGlobs, literalPathScope, pathScope } from "./action-targets.js";

/**
 * A changed path's git mode: a file, an executable file, a symlink, a
 * gitlink (a submodule pointer: a commit id, not a file twinlock can judge).
 */
export type ChangedFileMode = "100644" | "100755" | "120000" | "160000";

/** The mode of a submodule pointer. */
export const GITLINK: ChangedFileMode = "160000";

/**
 * One file the executor changed, by POSIX path relative to the checkout root;
 * `sha256` null (and no `mode`) when it was deleted. `mode` is absent in
 * changes recorded before it was (their digest alone is compared).
 */
export interface ChangedFile {
  path: string;
  sha256: string | null;
  mode?: ChangedFileMode;
}

/** What a changed path is, in words: "a submodule pointer, not a file", "a symlink", "an executable file", "a file", "deleted". */
export function kindOf(f: Pick<ChangedFile, "sha256" | "mode">): string {
  if (f.sha256 === null) return "deleted";
  if (f.mode === GITLINK) return "a submodule pointer, not a file";
  if (f.mode === "120000") return "a symlink";
  return f.mode === "100755" ? "an executable file" : "a file";
}

/** Whether a changed path, as recorded, is the same change as another: the same digest and (both recorded) the same mode. */
export function sameChange(a: Pick<ChangedFile, "sha256" | "mode">, b: Pick<ChangedFile, "sha256" | "mode">): boolean {
  return a.sha256 === b.sha256 && (a.mode === undefined || b.mode === undefined || a.mode === b.mode);
}

/** The recorded result of one verification run against an acceptance criterion. */
export interface CriterionEvidence {
  id: string;
  result: "passed" | "failed";
  command: string;
}

/** The executed change held against the plan: what was not done, what went outside it, what was not shown. */
export interface Conformance {
  /**
   * Actions none of whose targets a changed file lies in (or that name no
   * path at all). A deleted file or a submodule pointer does not do an
   * action: an action records no field saying it deletes, and a pointer's
   * commit is nothing twinlock can hold against the plan.
   */
  actions_not_done: string[];
  /** Changed files inside no action's target nor the run's own records. */
  files_outside_plan: string[];
  /** Criteria no verification result was recorded for. */
  criteria_without_evidence: string[];
  /** Criteria whose recorded result is `failed`. */
  criteria_failed: string[];
}

/**
 * Compare what was executed with what was approved (pure): each action is
 * done when a changed file (present, not a submodule pointer) lies in one of its targets; each changed file
 * must lie in some action's target or in `ownRecords` (the run file and the
 * handoff folder, which a run changes by itself); each criterion needs a
 * recorded result.
 */
export function checkConformance(input: {
  actions: readonly Pick<ActionRecord, "id" | "target">[];
  criteria: readonly Pick<CriterionRecord, "id">[];
  changed: readonly ChangedFile[];
  evidence: readonly CriterionEvidence[];
  ownRecords?: readonly string[];
}): Conformance {
  const scopes = input.actions.map((a) => ({ id: a.id, scope: pathScope(actionTargetGlobs(a.target)) }));
  // The run's own records are paths the agent named: compared literally.
  const own = literalPathScope(input.ownRecords ?? []);
  const done = new Set<string>();
  const outside: string[] = [];
  for (const f of input.changed) {
    const hits = scopes.filter((s) => s.scope.includes(f.path));
    if (doesWork(f)) for (const h of hits) done.add(h.id);
    if (hits.length === 0 && !own.includes(f.path)) outside.push(f.path);
  }
  const shown = new Set(input.evidence.map((e) => e.id));
  return {
    actions_not_done: input.actions.filter((a) => !done.has(a.id)).map((a) => a.id),
    files_outside_plan: outside,
    criteria_without_evidence: input.criteria.filter((c) => !shown.has(c.id)).map((c) => c.id),
    criteria_failed: input.evidence.filter((e) => e.result === "failed").map((e) => e.id),
  };
}

/** Whether a changed path counts as work done on an action's target: a file or symlink that exists at the change's head. */
function doesWork(f: ChangedFile): boolean {
  return f.sha256 !== null && f.mode !== GITLINK;
}

/**
 * Why each action that is not done is not (pure): the changed paths in its
 * target that do not count (deleted, or a submodule pointer), as
 * "cart/cache.go deleted"; an action with none is left out.
 */
export function whyNotDone(
  actions: readonly Pick<ActionRecord, "id" | "target">[],
  changed: readonly ChangedFile[],
  notDone: readonly string[],
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const idle = changed.filter((f) => !doesWork(f));
  for (const a of actions) {
    if (!notDone.includes(a.id)) continue;
    const scope = pathScope(actionTargetGlobs(a.target));
    const why = idle
      .filter((f) => scope.includes(f.path))
      .map((f) => `${f.path} ${f.sha256 === null ? "deleted" : "is a submodule pointer"}`);
    if (why.length > 0) out.set(a.id, why);
  }
  return out;
}
