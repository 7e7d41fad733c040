import { IntegrityError } from "../errors/errors.js";
import { type BoundedRecordChanges, boundRecordChanges, diffRecords } from "../handoff/diff-records.js";
import type { HandoffFormat } from "../handoff/handoff-format.js";
import type { HandoffModel } from "../handoff/handoff-model.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { type HandoffFormatRecipe, handoffFormatOf } from "../handoff/select-handoff-format.js";
import { readFrozenModel } from "../home/frozen-records.js";
import type { GateHome } from "../home/gate-home.js";
import { type PresentedRecords, presentRecords } from "./present-records.js";
import { type CommentItemChange, commentItemChanges, type ReviewComment } from "./review-comments.js";

/** How many action IDs outside the run's scope are named (the rest are counted). */
export const OUTSIDE_SHOWN = 50;

/** A revision's records as `present` shows them: within their budget, with the actions outside the run's scope and the changes since the previous revision. */
export interface FrozenRecordsShown {
  records: PresentedRecords;
  outside: { ids: string[]; total: number };
  changes: BoundedRecordChanges;
  /** For each comment of `commented`, whether its item changed from the previous revision to this one. */
  commentChanges: CommentItemChange[];
}

/** What a revision's records are presented from: plain data, so the work can run on a worker thread. */
export interface FrozenRecordsInput {
  /** The home holding the frozen bytes (its folder and identity). */
  home: GateHome;
  /** The revision's manifest. */
  shown: ManifestEntry[];
  /** The previous revision's manifest, when there is one. */
  previous?: ManifestEntry[];
  /** The run's action scope. */
  scope: "all" | readonly string[];
  /** Comments of a request for changes on the previous revision, to say for each whether its item changed. */
  commented?: readonly ReviewComment[];
}

/**
 * Read a revision's frozen records (and the previous revision's), diff them
 * and cut both to their budgets: work linear in the records, which may be
 * 16 MiB each, so a server runs it on a worker thread (`runOffThread`'s
 * `presentFrozenRecords`) with the format given as its recipe.
 */
export function presentFrozenRecords(input: FrozenRecordsInput & { format: HandoffFormatRecipe }): FrozenRecordsShown {
  return presentFrozenRecordsIn(handoffFormatOf(input.format), input);
}

/** `presentFrozenRecords` in a format at hand (on the calling thread). */
export function presentFrozenRecordsIn(format: HandoffFormat, input: FrozenRecordsInput): FrozenRecordsShown {
  const { home, shown, previous, scope } = input;
  const model = readFrozenModel(home, shown, format);
  const prevModel = previous ? readPreviousModel(home, previous, format) : undefined;
  const inScope = new Set(scope === "all" ? [] : scope);
  const outsideIds = scope === "all" ? [] : model.actions.map((a) => a.id).filter((id) => !inScope.has(id));
  return {
    records: presentRecords(model, shown),
    outside: { ids: outsideIds.slice(0, OUTSIDE_SHOWN), total: outsideIds.length },
    changes: boundRecordChanges(previous ? diffRecords(prevModel, model, previous, shown) : []),
    commentChanges: commentItemChanges(input.commented ?? [], { model: prevModel, files: previous ?? [] }, { model, files: shown }),
  };
}

/** The previous revision's model, or undefined when it does not read in the format now pinned (its records are then shown as all new). */
function readPreviousModel(home: GateHome, files: readonly ManifestEntry[], format: HandoffFormat): HandoffModel | undefined {
  try {
    return readFrozenModel(home, files, format);
  } catch (error) {
    if (error instanceof IntegrityError) return undefined;
    throw error;
  }
}
