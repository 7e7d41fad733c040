import { describeState } from "../run/describe-state.js";
import type { State } from "../run/transition-table.js";

/**
 * A state's words after its name, where the name alone misleads
 * (`dry_run_ready` after a consent reads as if a dry run were pending: it is
 * "ready for a dry run or admission"); "" where the words only repeat the name.
 */
export function stateInWords(state: State): string {
  const words = describeState(state);
  return words === state.replace(/_/g, " ") ? "" : ` (${words})`;
}
