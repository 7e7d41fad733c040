import { realpathSync } from "node:fs";
import path from "node:path";
import { IntegrityError, RefusalError } from "../errors/errors.js";
import { hasParentPart, targetPath } from "../handoff/action-target-path.js";
import { readFrozenModel } from "../home/frozen-records.js";
import type { GateHome } from "../home/gate-home.js";
import { isWithin, resolveRealPath } from "../input/resolve-real-path.js";
import type { RunState, Workflow } from "../run/run-schema.js";
import { handoffPathOf, type RunStore } from "../store/run-store.js";
import { loadRunSuite } from "./load-run-suite.js";

/**
 * The targets an admission of `executor` now would bind its session to
 * (`admittedTargets` of the actions the latest approved consent grants, or
 * of `actions` when asked), read without writing anything and without a
 * lock: what `exec` checks before `admit` uses the consent (SPEC §11), so a
 * session the sandbox would refuse is refused before it is admitted. Empty
 * when the run would admit nothing (no such pair, nothing frozen, no
 * approved consent) or its facts cannot be read: admission then refuses
 * with its own checks, and the binding resolves the targets again.
 */
export async function targetsToAdmit(input: {
  store: RunStore;
  runFile: string;
  executor: string;
  planner?: string;
  /** The actions asked for (`--actions`); undefined: those the consent grants. */
  actions?: readonly string[];
  projectDir: string;
}): Promise<string[]> {
  try {
    const run = await input.store.read(input.runFile);
    const all = Object.values(run.state.workflows);
    const wf =
      input.planner !== undefined
        ? Object.hasOwn(run.state.workflows, input.planner)
          ? run.state.workflows[input.planner]
          : undefined
        : (all.find((w) => w.executor === input.executor) ?? (all.length === 1 ? all[0] : undefined));
    const consent = wf?.consents[wf.consents.length - 1];
    if (!wf?.handoff || consent?.decision !== "approved") return [];
    const actions =
      input.actions ??
      (consent.actions === "all"
        ? readFrozenModel(input.store.home, wf.handoff.files, loadRunSuite(input.store.home, run.state, wf).handoffFormat).actions.map(
            (a) => a.id,
          )
        : consent.actions);
    const handoff = realOr(handoffPathOf(input.store, input.runFile, wf.handoff.dir, run.state.suite.root));
    return admittedTargets(input.store.home, run.state, wf, actions, input.projectDir, handoff);
  } catch (error) {
    if (error instanceof RefusalError || error instanceof IntegrityError) return [];
    throw error;
  }
}

/**
 * The real paths of the admitted actions' targets. A target is read as a
 * path when it looks like one (no spaces; a trailing `:LINE` or `:FROM-TO`
 * dropped) and resolves inside the project; anything else ("the staging
 * database", `/etc/hosts`) scopes no file. Nor does a target with a `..`
 * part (`cart/x.go/..` reads as a file and names the folder), or one whose
 * path passes through a symbolic link: the reviewer approved the path as written,
 * and a link (`cart/cache.go -> ..`, planted by the agent in its own tree)
 * would make it cover another place, the whole project even. Nor does a
 * target inside the pair's handoff folder, which the planner's session may
 * write. `note` is told.
 */
export function admittedTargets(
  home: GateHome,
  state: RunState,
  wf: Workflow,
  actions: readonly string[],
  projectDir: string,
  handoffDir: string,
  note: (text: string) => void = () => {},
): string[] {
  const pinned = loadRunSuite(home, state, wf);
  const model = readFrozenModel(home, (wf.handoff as NonNullable<Workflow["handoff"]>).files, pinned.handoffFormat);
  const admitted = new Set(actions);
  const project = resolveRealPath(projectDir, "/");
  const out = new Set<string>();
  for (const a of model.actions) {
    if (!admitted.has(a.id) || a.target === null) continue;
    const target = targetPath(a.target);
    if (target === "" || /\s/.test(target) || target.includes("\u0000")) continue;
    // `cart/cache_race_test.go/..` reads as a file to a reviewer and names the folder: a `..` in a target is refused.
    if (hasParentPart(target)) {
      note(`twinlock: action ${a.id}'s target ${target} holds a .. part; it scopes no file, so the hook denies writes to it`);
      continue;
    }
    const written = path.resolve(project, target);
    const real = resolveRealPath(written, "/");
    // A target reaching outside the project (an absolute path, `..`, a link planted before exec) scopes nothing.
    if (!isWithin(real, project)) continue;
    if (real !== written) {
      note(
        `twinlock: action ${a.id}'s target ${target} goes through a symbolic link to ${real}; it scopes no file, so the hook denies writes to it (remove the link and run the executor again)`,
      );
      continue;
    }
    // The planner's session may write its handoff folder: a target there would be the planner's to change under the executor.
    if (isWithin(real, handoffDir)) {
      note(
        `twinlock: action ${a.id}'s target ${target} is inside the planner's handoff folder ${handoffDir}; it scopes no file, so the hook denies writes to it`,
      );
      continue;
    }
    out.add(real);
  }
  return [...out].sort();
}

/** The real path of `p`, or `p` resolved when it is not there (yet). */
export function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
