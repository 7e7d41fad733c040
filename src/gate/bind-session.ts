import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { RefusalError, UsageError } from "../errors/errors.js";
import { targetPath } from "../handoff/action-target-path.js";
import { folderRunStore } from "../home/folder-run-store.js";
import { readFrozenModel } from "../home/frozen-records.js";
import type { GateHome } from "../home/gate-home.js";
import { processIdentity } from "../home/process-identity.js";
import { readCheckpoint } from "../home/run-checkpoints.js";
import { BINDING_FORMAT, type SessionBinding, secretDigest } from "../home/session-binding.js";
import { removeSessionBinding, sessionRunFile, writeSessionBinding } from "../home/write-session-binding.js";
import { isWithin, resolveRealPath } from "../input/resolve-real-path.js";
import { openStops } from "../run/admission-checks.js";
import type { Workflow } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import { handoffPathOf, type RunStore } from "../store/run-store.js";
import { loadRunSuite } from "./load-run-suite.js";
import { admittedTargets, realOr } from "./resolve-session-targets.js";

/** What both kinds of session are bound with. */
interface BindCommon {
  /** The run, as the store names it (the folder store: the run file's path). */
  runFile: string;
  /** The gate home the binding is written in: the one the installed hook names (`--home`), whatever the store. */
  home: GateHome;
  /** Where the run lives (default: the folder store of `home`). */
  store?: RunStore;
  projectDir: string;
  /** The process the agent runs below (`exec` or `plan`); its start time is recorded with it. */
  pid: number;
  secret: string;
  now?: () => Date;
}

/**
 * Bind an admitted executor's session (`exec`): record in the gate home what
 * the hook will allow it to touch — the admitted actions' targets, the
 * checkout and its manifest, the consent's expiry, the run's head — tied to
 * the exec process (PID and start time) and a secret only its child is
 * given. Refused unless the executor is admitted (state executing) on the
 * frozen hash. On a folder store the hook checks the run's checkpoint
 * itself; on a team store it cannot read the database, and exec's re-checks
 * (`sessionEnded`) end the binding on any change of the run.
 */
export async function bindSession(
  input: BindCommon & {
    executor: string;
    checkoutDir: string;
    /** Told of each admitted target that scopes no file, and why (a `..` part, or a symbolic link on its path). */
    note?: (text: string) => void;
  },
): Promise<SessionBinding> {
  const store = input.store ?? folderRunStore(input.home);
  const run = await store.read(input.runFile);
  const wf = Object.values(run.state.workflows).find((w) => w.executor === input.executor);
  const admission = wf?.admissions[wf.admissions.length - 1];
  if (wf?.state !== "executing" || !wf.handoff || !admission || admission.handoff_hash !== wf.handoff.hash)
    throw new RefusalError(`${input.executor} is not admitted (state ${wf?.state ?? "none"}); a session is bound only after admission`);
  // A stop raised between the admission and this binding would otherwise be inside the checkpoint the session is bound to.
  const stop = openStops(run.state, wf.planner)[0];
  if (stop)
    throw new RefusalError(
      `!STOP:${stop.reason} is open on ${stop.workflow ?? "the run"}: ${input.executor}'s session is not bound; resolve the stop (twinlock resolve-stop) and admit again`,
      { attack: "stopped-before-binding" },
    );
  const consent = wf.consents[wf.consents.length - 1];
  const binding: SessionBinding = {
    ...common(input, store, run),
    kind: "executor",
    executor: wf.executor,
    planner: wf.planner,
    handoff_hash: wf.handoff.hash,
    revision: wf.handoff.revision,
    actions: admission.requested.actions,
    targets: admittedTargets(
      store.home,
      run.state,
      wf,
      admission.requested.actions,
      input.projectDir,
      realOr(handoffPathOf(store, input.runFile, wf.handoff.dir, run.state.suite.root)),
      input.note,
    ),
    checkout_dir: resolveRealPath(input.checkoutDir, "/"),
    handoff_dir: null,
    manifest: wf.handoff.files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
    consent_expires_at: consent?.expires_at ?? null,
  };
  return writeAndRecheck(input.home, store, input.runFile, binding);
}

/**
 * Bind a planner's session (`plan`): the hook then lets it read, run the
 * read-only commands it can scope, write inside its handoff folder only and
 * call twinlock's own agent MCP tools. The handoff folder is the one the
 * pair froze before, or (before the first freeze) `handoffDir`; either way a
 * real folder reached through no symbolic link, holding neither the project
 * it is started in, the run file, the gate home, the pinned suite nor any
 * target of the plan frozen last. Refused on a closed pair or an open stop.
 */
export async function bindPlannerSession(input: BindCommon & { planner: string; handoffDir?: string }): Promise<SessionBinding> {
  const store = input.store ?? folderRunStore(input.home);
  const run = await store.read(input.runFile);
  const wf = Object.hasOwn(run.state.workflows, input.planner) ? run.state.workflows[input.planner] : undefined;
  if (!wf)
    throw new UsageError(
      `${input.planner} is not a planner of run ${run.state.run_id} (its planners: ${Object.keys(run.state.workflows).join(", ")})`,
    );
  if (wf.state === "closed" || wf.state === "failed")
    throw new RefusalError(`${wf.planner}'s workflow is ${wf.state}: there is nothing left to plan, so no planner's session is bound`);
  const stop = openStops(run.state, wf.planner)[0];
  if (stop)
    throw new RefusalError(
      `!STOP:${stop.reason} is open on ${stop.workflow ?? "the run"}: ${wf.planner}'s session is not bound; resolve the stop (twinlock resolve-stop) first`,
    );
  const project = resolveRealPath(input.projectDir, "/");
  const handoff = plannerHandoffDir(store, input.runFile, run.state.suite.root, wf, input.handoffDir, project);
  const pinned = loadRunSuite(store.home, run.state, wf);
  // The project may hold the handoff folder (agent-work/handoff), never the other way round; the gate's folders neither.
  if (isWithin(project, handoff))
    throw new RefusalError(
      `the handoff folder ${handoff} holds the folder the session is started in (the project, ${project}): a planner may write only its handoff folder; give one of its own (--handoff DIR)`,
    );
  const gateFolders: Array<[string, string]> = [
    [input.home.dir, "the gate home"],
    [store.home.dir, "the gate home's copy of the store"],
    [pinned.pin.root, "the pinned suite"],
  ];
  for (const [other, what] of gateFolders) {
    const real = resolveRealPath(other, "/");
    if (isWithin(real, handoff) || isWithin(handoff, real))
      throw new RefusalError(
        `the handoff folder ${handoff} ${isWithin(real, handoff) ? "holds" : "is inside"} ${what} (${real}): a planner may write only its handoff folder; give one of its own (--handoff DIR)`,
      );
  }
  const runFolder = store.runFolder(input.runFile);
  if (runFolder !== undefined && isWithin(sessionRunFile(input.runFile), handoff))
    throw new RefusalError(`the handoff folder ${handoff} holds the run file: keep the run file beside the handoff folder, not in it`);
  if (wf.handoff) {
    const model = readFrozenModel(store.home, wf.handoff.files, pinned.handoffFormat);
    for (const a of model.actions) {
      if (a.target === null) continue;
      const target = targetPath(a.target);
      if (target === "" || /\s/.test(target)) continue;
      const real = resolveRealPath(target, project);
      if (isWithin(real, handoff))
        throw new RefusalError(
          `action ${a.id}'s target ${target} is inside the handoff folder ${handoff}: a planner never writes an action's target; move the handoff folder`,
        );
    }
  }
  const binding: SessionBinding = {
    ...common(input, store, run),
    kind: "planner",
    executor: wf.executor,
    planner: wf.planner,
    handoff_hash: wf.handoff?.hash ?? null,
    revision: wf.revision,
    actions: [],
    targets: [],
    checkout_dir: null,
    handoff_dir: handoff,
    manifest: [],
    consent_expires_at: null,
  };
  return writeAndRecheck(input.home, store, input.runFile, binding);
}

/**
 * Write the binding, then read the run again and keep the binding only while
 * the session still holds on the run as it is now: a stop raised after this
 * bind read the run (recorded in the gate home, or written into the chain)
 * may have ended the run's sessions before this binding was there to end, so
 * the binding is removed again and the bind refused.
 */
async function writeAndRecheck(home: GateHome, store: RunStore, runFile: string, binding: SessionBinding): Promise<SessionBinding> {
  await writeSessionBinding(home, binding);
  let ended: string | undefined;
  try {
    ended = sessionEnded(binding, await store.read(runFile));
  } catch (error) {
    ended = `the run cannot be read again (${(error as Error).message})`;
  }
  if (ended === undefined) return binding;
  await removeSessionBinding(home, binding);
  const who = binding.kind === "executor" ? binding.executor : `planner ${binding.planner}`;
  throw new RefusalError(`${who}'s session is not bound: ${ended} while it was being bound`, { attack: "stopped-while-binding" });
}

/** The fields both kinds record the same way. */
function common(
  input: BindCommon,
  store: RunStore,
  run: LoadedRun,
): Pick<
  SessionBinding,
  "format" | "run_id" | "run_file" | "store" | "project_dir" | "checkpoint" | "process" | "secret_sha256" | "created_at"
> {
  const folder = store.runFolder(input.runFile) !== undefined;
  let checkpoint = { seq: run.file.revision, head: run.file.head };
  if (folder) {
    const c = readCheckpoint(store.home, run.state.run_id);
    if (!c) throw new RefusalError(`gate home ${store.home.dir} has no checkpoint of run ${run.state.run_id}`);
    checkpoint = { seq: c.seq, head: c.head };
  }
  return {
    format: BINDING_FORMAT,
    run_id: run.state.run_id,
    run_file: folder ? sessionRunFile(input.runFile) : run.state.run_id,
    store: folder ? "folder" : "team",
    project_dir: resolveRealPath(input.projectDir, "/"),
    checkpoint,
    process: processIdentity(input.pid),
    secret_sha256: secretDigest(input.secret),
    created_at: (input.now?.() ?? new Date()).toISOString(),
  };
}

/**
 * Why a bound session no longer holds, judged on the run as the store has it
 * now, or undefined while it holds. Every session ends on an open stop on its
 * pair or the run (one pending in the gate home included); an executor's on
 * any change of the run too (a close, a consent withdrawn, a new revision); a
 * planner's on its pair closed.
 */
export function sessionEnded(binding: SessionBinding, run: LoadedRun): string | undefined {
  if (run.state.run_id !== binding.run_id) return `the run is now run ${run.state.run_id}, not ${binding.run_id}`;
  if (binding.kind === "executor") {
    const bound = binding.checkpoint;
    if (bound === null || run.file.revision !== bound.seq || run.file.head !== bound.head)
      return `run ${binding.run_id} was written since the session was bound (a stop, a close, a consent withdrawn or a new revision)`;
  }
  // The run as read shows a stop still pending in the gate home as standing, though no write of the chain holds it yet.
  const stop = openStops(run.state, binding.planner)[0];
  if (stop) return `!STOP:${stop.reason} was raised on ${stop.workflow ?? "the run"}`;
  if (binding.kind === "executor") return undefined;
  const wf = Object.hasOwn(run.state.workflows, binding.planner) ? run.state.workflows[binding.planner] : undefined;
  if (!wf || wf.state === "closed" || wf.state === "failed") return `${binding.planner}'s workflow is ${wf?.state ?? "gone"}`;
  return undefined;
}

/** End a session: its binding leaves the home, so the hook denies again. */
export async function unbindSession(home: GateHome, binding: SessionBinding): Promise<void> {
  await removeSessionBinding(home, binding);
}

/**
 * The planner's handoff folder as a real path: the one its pair froze before
 * (a different `given` is refused), else `given`. Refused when it is not a
 * folder, or when its path goes through a symbolic link (as an admitted
 * target is): the folder a person named is the folder the planner writes.
 */
function plannerHandoffDir(
  store: RunStore,
  ref: string,
  suiteRoot: string,
  wf: Workflow,
  given: string | undefined,
  project: string,
): string {
  const frozen = wf.handoff ? handoffPathOf(store, ref, wf.handoff.dir, suiteRoot) : undefined;
  const named = given ?? frozen;
  if (named === undefined)
    throw new UsageError(`${wf.planner} has frozen nothing yet, so the run names no handoff folder: give it with --handoff DIR`);
  const written = path.isAbsolute(named) ? path.resolve(named) : path.resolve(project, named);
  let real: string;
  try {
    real = realpathSync(written);
    if (!statSync(real).isDirectory()) throw new Error("not a folder");
  } catch {
    throw new UsageError(`the handoff folder ${written} is not an existing folder; create it (or give the right one with --handoff DIR)`);
  }
  if (real !== written)
    throw new RefusalError(
      `the handoff folder ${written} goes through a symbolic link to ${real}: name the folder by its real path (--handoff ${real})`,
    );
  if (frozen !== undefined && given !== undefined && realOr(frozen) !== real)
    throw new RefusalError(`${wf.planner} froze ${frozen} before: its planner works in that folder, not ${written}; leave out --handoff`);
  return real;
}
