import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { hasPendingStop } from "../home/pending-stop-listing.js";
import { hasProcFs, isSameProcess, parentOf } from "../home/process-identity.js";
import { resolveHomeDir } from "../home/resolve-home-dir.js";
import {
  bindingEndedFile,
  bindingFile,
  LEASE_MS,
  parseSessionBinding,
  RUN_ID_PATTERN,
  type SessionBinding,
  type SessionKind,
  secretDigest,
} from "../home/session-binding.js";
import { readOwnRecordQuietly } from "../input/read-own-record.js";
import { resolveRealPath } from "../input/resolve-real-path.js";
import { ownPidNamespace, readSandboxRecord, sandboxRecordFile } from "../sandbox/sandbox-record.js";
import { describeRunChange } from "./describe-run-change.js";

/** The binding a call may act under, or why there is none it may trust. */
export type BindingVerdict = { ok: true; binding: SessionBinding } | { ok: false; reason: string };

/** Why a call with no session variables has no binding: the one verdict verifyBinding reaches without reading a file. */
export const NO_SESSION = "no twinlock session is bound (TWINLOCK_RUN, TWINLOCK_SESSION, or TWINLOCK_EXECUTOR / TWINLOCK_PLANNER unset)";

/** True when the environment names a session at all: TWINLOCK_RUN, TWINLOCK_SESSION and an executor or a planner. */
export function namesSession(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.TWINLOCK_RUN && env.TWINLOCK_SESSION && (env.TWINLOCK_EXECUTOR || env.TWINLOCK_PLANNER));
}

/**
 * Find and re-check the session binding the environment names
 * (`TWINLOCK_RUN`, `TWINLOCK_SESSION` and `TWINLOCK_EXECUTOR`, set by
 * `twinlock exec`, or `TWINLOCK_PLANNER`, set by `twinlock plan`). Reads only
 * the binding, the listing of the run's pending stops, the run's checkpoint and
 * the checkout: never the suite, the
 * run file's events or the database. Everything the agent could have
 * changed (the env, the checkout) is checked against what the gate home
 * recorded; the agent cannot write the home.
 */
export function verifyBinding(env: NodeJS.ProcessEnv, homeArg: string | undefined, now: Date): BindingVerdict {
  const runEnv = env.TWINLOCK_RUN;
  const secret = env.TWINLOCK_SESSION;
  if (!runEnv || !secret || !(env.TWINLOCK_EXECUTOR || env.TWINLOCK_PLANNER)) return { ok: false, reason: NO_SESSION };
  // One session per call: an environment naming both kinds is not one the gate made.
  if (env.TWINLOCK_EXECUTOR && env.TWINLOCK_PLANNER)
    return { ok: false, reason: "both TWINLOCK_EXECUTOR and TWINLOCK_PLANNER are set; a session is an executor's or a planner's" };
  const kind: SessionKind = env.TWINLOCK_EXECUTOR ? "executor" : "planner";
  const id = (env.TWINLOCK_EXECUTOR || env.TWINLOCK_PLANNER) as string;
  // Only the home the installed command names: TWINLOCK_HOME, XDG_STATE_HOME and HOME are the agent's to shape.
  if (homeArg === undefined)
    return {
      ok: false,
      reason: "the hook command names no gate home (--home DIR); reinstall it with `twinlock hooks install --agent NAME`",
    };
  const homeDir = resolveHomeDir(homeArg);
  const homeProblem = unsafeHome(homeDir);
  if (homeProblem) return { ok: false, reason: homeProblem };
  // A team store's run is named by its ID; a run file by its real path.
  const runKey = RUN_ID_PATTERN.test(runEnv) ? runEnv : resolveRealPath(runEnv, process.cwd());
  const file = bindingFile(homeDir, runKey, kind, id);
  const read = readBinding(file);
  if (read === undefined)
    return {
      ok: false,
      reason: `no session of ${kind === "planner" ? "planner " : ""}${id} on ${runKey} is bound in gate home ${homeDir}${endedBecause(file)}`,
    };
  const b = parseSessionBinding(read.text);
  if ("problem" in b) return { ok: false, reason: b.problem };
  if (b.kind !== kind || b.run_file !== runKey || (kind === "executor" ? b.executor : b.planner) !== id)
    return { ok: false, reason: "the binding names another run, kind or prompt" };
  if (secretDigest(secret) !== b.secret_sha256) return { ok: false, reason: "TWINLOCK_SESSION is not this binding's secret" };
  const below = belowBinder(b, b.kind === "executor" ? "exec" : "plan", sandboxRecordFile(file));
  if (below) return { ok: false, reason: below };
  const age = now.getTime() - read.mtimeMs;
  if (!(age <= LEASE_MS) || age < -LEASE_MS)
    return {
      ok: false,
      reason: `the session's lease ran out (last renewed ${Math.round(age / 1000)} s ago): the ${kind === "executor" ? "exec" : "plan"} that bound it stopped renewing it`,
    };
  // A person's stop stands from the moment it is recorded in the home, before any writer puts it in the chain (the
  // agent may hold the run's lock with a stopped writer): while one is pending, no session of the run acts.
  if (b.store === "folder" && hasPendingStop(homeDir, b.run_id))
    return {
      ok: false,
      reason: `a stop of run ${b.run_id} is recorded in the gate home and waits to be written into the run's chain: no session of the run acts meanwhile`,
    };
  if (b.kind === "planner") {
    const dir = b.handoff_dir as string;
    if (realOrUndefined(dir) !== dir) return { ok: false, reason: `the handoff folder ${dir} is gone or is now a symbolic link` };
    return { ok: true, binding: b };
  }
  if (b.consent_expires_at !== null && !(now.getTime() < Date.parse(b.consent_expires_at)))
    return { ok: false, reason: `the consent expired at ${b.consent_expires_at}` };
  // A team store's run is in the database, which the hook cannot read: exec re-checks it and ends the binding on any change.
  if (b.store === "folder") {
    const checkpoint = readCheckpointLoosely(homeDir, b.run_id);
    if (b.checkpoint === null || checkpoint?.seq !== b.checkpoint.seq || checkpoint?.head !== b.checkpoint.head) {
      const what = describeRunChange(checkpoint, b.checkpoint);
      return {
        ok: false,
        reason: `run ${b.run_id} was written since the session was bound${what === "" ? " (a stop, a close or a new revision)" : `: ${what}`}`,
      };
    }
  }
  const checkout = checkoutProblem(b);
  if (checkout) return { ok: false, reason: checkout };
  return { ok: true, binding: b };
}

/** The binding file's text and modification time (the lease), read through one descriptor; undefined when there is none. */
function readBinding(file: string): { text: string; mtimeMs: number } | undefined {
  const read = readOwnRecordQuietly(file, 16 * 1024 * 1024);
  return read && { text: read.text, mtimeMs: read.stats.mtimeMs };
}

/** Why a stop ended the session bound in `file` (the note it left), or "" when there is none. */
function endedBecause(file: string): string {
  const note = readOwnRecordQuietly(bindingEndedFile(file), 4096);
  if (note === undefined) return "";
  try {
    const n = JSON.parse(note.text);
    return typeof n.why === "string" && typeof n.at === "string" ? `: the session was ended at ${n.at}: ${n.why}` : "";
  } catch {
    return "";
  }
}

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

function unsafeHome(dir: string): string | undefined {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(dir);
  } catch (error) {
    return `gate home ${dir} cannot be read (${(error as NodeJS.ErrnoException).code})`;
  }
  if (!st.isDirectory()) return `gate home ${dir} is not a folder`;
  if ((st.mode & 0o022) !== 0) return `gate home ${dir} is writable by others (mode ${(st.mode & 0o777).toString(8)})`;
  const uid = typeof process.geteuid === "function" ? process.geteuid() : undefined;
  if (uid !== undefined && uid !== 0 && st.uid !== uid) return `gate home ${dir} belongs to another user`;
  return undefined;
}

/** The run's checkpoint in the home as JSON, unchecked past its head (compared) and its last write (only described); undefined when unreadable. */
function readCheckpointLoosely(homeDir: string, runId: string): { seq?: unknown; head?: unknown } | undefined {
  if (!/^run_[0-9a-f]{16}$/.test(runId)) return undefined;
  try {
    const c = JSON.parse(readFileSync(path.join(homeDir, "runs", `${runId}.json`), "utf8"));
    return c !== null && typeof c === "object" ? c : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why this call is not from below the process that bound the session, or
 * undefined when it is. On Linux (/proc): an ancestor of the hook, walked up
 * from /proc/self/stat, is that PID, started at the recorded time in the
 * recorded boot (a PID reused after the binder died is another process).
 * In exec's sandbox the walk ends at the first process of the sandbox's PID
 * namespace (exec is outside it, with no PID there): the call is then below
 * the binder when this process is in the PID namespace that the binder
 * recorded beside the binding for this session (`sandbox-record.ts`), and
 * the lease (renewed only by a live binder) stands for its liveness.
 * Elsewhere the process tree cannot be read without starting a program: the
 * binder must be alive, and the lease bounds the rest.
 */
function belowBinder(b: SessionBinding, binder: "exec" | "plan", recordFile: string): string | undefined {
  const p = b.process;
  if (!hasProcFs()) return isSameProcess(p) ? undefined : `the ${binder} process ${p.pid} that bound the session has ended`;
  let current = parentOf("self");
  let reused = false;
  for (let i = 0; i < 128 && current !== undefined && current > 1; i++) {
    if (current === p.pid) {
      if (isSameProcess(p)) return undefined;
      // Another process with the binder's PID: the binder ended, or (in a PID namespace) a sandboxed one numbered alike.
      reused = true;
    }
    current = parentOf(current);
  }
  if (inRecordedSandbox(b, recordFile)) return undefined;
  if (reused) return `process ${p.pid} is not the ${binder} that bound the session (it ended, and its PID was given to another process)`;
  return `this call does not come from below the ${binder} process ${p.pid} that bound the session`;
}

/**
 * Whether this process runs in the PID namespace of the session's sandbox,
 * as the binder recorded it. The binder writes the record as soon as bwrap
 * reports the namespace, before the tool inside has started: a call this
 * early waits a moment for it.
 */
function inRecordedSandbox(b: SessionBinding, file: string): boolean {
  const own = ownPidNamespace();
  if (own === undefined) return false;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  // Only in a sandbox (the first process of its PID namespace is bwrap's) is a record worth waiting for.
  const tries = firstProcessIsBubblewrap() ? 25 : 1;
  for (let i = 0; i < tries; i++) {
    const r = readSandboxRecord(file);
    if (r)
      return (
        r.pid_namespace === own &&
        r.secret_sha256 === b.secret_sha256 &&
        r.process.pid === b.process.pid &&
        r.process.start === b.process.start &&
        r.process.boot_id === b.process.boot_id
      );
    if (i + 1 < tries) Atomics.wait(pause, 0, 0, 20);
  }
  return false;
}

function firstProcessIsBubblewrap(): boolean {
  try {
    return readFileSync("/proc/1/comm", "utf8").trim() === "bwrap";
  } catch {
    return false;
  }
}

/** The checkout holds exactly the approved files with their approved bytes, or what differs. */
function checkoutProblem(b: SessionBinding): string | undefined {
  const checkoutDir = b.checkout_dir as string;
  const expected = new Map(b.manifest.map((f) => [f.path, f]));
  const seen = new Set<string>();
  const walk = (rel: string): string | undefined => {
    let entries: string[];
    try {
      entries = readdirSync(path.join(checkoutDir, rel));
    } catch {
      return `the checkout ${checkoutDir} cannot be read`;
    }
    for (const name of entries) {
      const r = rel === "" ? name : `${rel}/${name}`;
      const abs = path.join(checkoutDir, r);
      const st = lstatSync(abs);
      if (st.isDirectory()) {
        const problem = walk(r);
        if (problem) return problem;
        continue;
      }
      const want = expected.get(r);
      if (!st.isFile() || !want) return `the checkout holds ${r}, which is not an approved file`;
      if (st.size !== want.size || createHash("sha256").update(readFileSync(abs)).digest("hex") !== want.sha256)
        return `the checkout's ${r} was edited since it was approved`;
      seen.add(r);
    }
    return undefined;
  };
  const problem = walk("");
  if (problem) return `${problem}: it no longer holds the approved hash ${b.handoff_hash}`;
  if (seen.size !== expected.size) return `the checkout is missing approved files: it no longer holds the approved hash ${b.handoff_hash}`;
  return undefined;
}
