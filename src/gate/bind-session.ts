import path from "node:path";
import { RefusalError } from "../errors/errors.js";
import { hasParentPart, targetPath } from "../handoff/action-target-path.js";
import { readFrozenModel } from "../home/frozen-records.js";
import type { GateHome } from "../home/gate-home.js";
import { readCheckpoint } from "../home/run-checkpoints.js";
import { readRun } from "../home/run-ledger.js";
import { BINDING_FORMAT, type SessionBinding, secretDigest } from "../home/session-binding.js";
import { removeSessionBinding, sessionRunFile, writeSessionBinding } from "../home/write-session-binding.js";
import { isWithin, resolveRealPath } from "../input/resolve-real-path.js";
import { openStops } from "../run/admission-checks.js";
import type { Workflow } from "../run/run-schema.js";
import { loadRunSuite } from "./load-run-suite.js";

/**
 * Bind an admitted executor's session (SPEC §11 `exec`): record in the gate
 * home what the hook will allow it to touch — the admitted actions' targets,
 * the checkout and its manifest, the consent's expiry, the run's checkpoint
 * head — tied to the exec process and a secret only its child is given.
 * Refused unless the executor is admitted (state executing) on the frozen hash.
 */
export async function bindSession(input: {
  runFile: string;
  home: GateHome;
  executor: string;
  checkoutDir: string;
  projectDir: string;
  pid: number;
  secret: string;
  now?: () => Date;
  /** Told of each admitted target that scopes no file, and why (a `..` part, or a symbolic link on its path). */
  note?: (text: string) => void;
}): Promise<SessionBinding> {
  const run = readRun(input.runFile, input.home);
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
  const checkpoint = readCheckpoint(input.home, run.state.run_id);
  if (!checkpoint) throw new RefusalError(`gate home ${input.home.dir} has no checkpoint of run ${run.state.run_id}`);
  const consent = wf.consents[wf.consents.length - 1];
  const binding: SessionBinding = {
    format: BINDING_FORMAT,
    run_id: run.state.run_id,
    run_file: sessionRunFile(input.runFile),
    executor: wf.executor,
    planner: wf.planner,
    handoff_hash: wf.handoff.hash,
    revision: wf.handoff.revision,
    actions: admission.requested.actions,
    targets: admittedTargets(input.home, run.state, wf, admission.requested.actions, input.projectDir, input.note),
    project_dir: resolveRealPath(input.projectDir, "/"),
    checkout_dir: resolveRealPath(input.checkoutDir, "/"),
    manifest: wf.handoff.files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
    consent_expires_at: consent?.expires_at ?? null,
    checkpoint: { seq: checkpoint.seq, head: checkpoint.head },
    pid: input.pid,
    secret_sha256: secretDigest(input.secret),
    created_at: (input.now?.() ?? new Date()).toISOString(),
  };
  await writeSessionBinding(input.home, binding);
  return binding;
}

/** End a session: its binding leaves the home, so the hook denies again. */
export async function unbindSession(home: GateHome, binding: SessionBinding): Promise<void> {
  await removeSessionBinding(home, binding);
}

/**
 * The real paths of the admitted actions' targets. A target is read as a
 * path when it looks like one (no spaces; a trailing `:LINE` or `:FROM-TO`
 * dropped) and resolves inside the project; anything else ("the staging
 * database", `/etc/hosts`) scopes no file. Nor does a target with a `..`
 * part (`cart/x.go/..` reads as a file and names the folder), or one whose
 * path passes through a symbolic link: the reviewer approved the path as written,
 * and a link (`cart/cache.go -> ..`, planted by the agent in its own tree)
 * would make it cover another place, the whole project even. `note` is told.
 */
function admittedTargets(
  home: GateHome,
  state: Parameters<typeof loadRunSuite>[1],
  wf: Workflow,
  actions: readonly string[],
  projectDir: string,
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
    out.add(real);
  }
  return [...out].sort();
}
