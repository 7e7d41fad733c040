import { RefusalError, UsageError } from "../errors/errors.js";
import { RECORD_ID_PATTERN } from "../handoff/handoff-records.js";
import { clip } from "../input/parse-input.js";

/**
 * Throw unless every action the run's scope names is an action of the plan
 * (`planActions`, the frozen plan's +ACTION IDs). A scope set when the run
 * began (`init-run --actions`) can name an action the plan never holds: a
 * person would be asked to consent to work that is not in the plan, and no
 * admission could ever run it. Refused at the freeze, so the planner fixes
 * the plan (or a new run names the plan's actions), and again at consent.
 */
export function requireScopeInPlan(scope: "all" | readonly string[], planActions: readonly string[], planner: string, what: string): void {
  if (scope === "all") return;
  const missing = scope.filter((a) => !planActions.includes(a));
  if (missing.length === 0) return;
  const named = missing.map((a) => `+ACTION:${a}`).join(", ");
  throw new RefusalError(
    `cannot ${what}: the run's action scope names ${named}, which ${planner}'s plan does not hold (its actions: ${planActions.length > 0 ? planActions.map((a) => `+ACTION:${a}`).join(", ") : "none"}); add ${missing.length === 1 ? "it" : "them"} to the plan and freeze again, or start a new run whose action list names the plan's actions (or all)`,
    { code: "SCOPE_NOT_IN_PLAN", missing },
  );
}

/**
 * Throw unless `actions` is a list of action IDs, each once, and not `all`
 * among them: a run's scope is printed in the consent question a person
 * answers (nothing in it may hide text on a terminal, or read as two actions
 * or as all of them), and an admission asks within it.
 */
export function requireActionIds(actions: readonly string[]): void {
  for (const action of actions)
    if (!RECORD_ID_PATTERN.test(action))
      throw new UsageError(
        `the action list holds ${JSON.stringify(clip(action))}, which is not an action ID (letters, digits, . _ -, e.g. A1)`,
      );
  const twice = actions.find((a, i) => actions.indexOf(a) !== i);
  if (twice !== undefined) throw new UsageError(`the action list names ${JSON.stringify(clip(twice))} twice; list each +ACTION ID once`);
  if (actions.some((a) => a.toLowerCase() === "all"))
    throw new UsageError("the action list mixes all with action IDs; give all alone, or only the IDs");
}
