import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { resolveHomeDir } from "../home/resolve-home-dir.js";
import { bindingFile, parseSessionBinding, type SessionBinding, secretDigest } from "../home/session-binding.js";
import { resolveRealPath } from "../input/resolve-real-path.js";

/** The binding a call may act under, or why there is none it may trust. */
export type BindingVerdict = { ok: true; binding: SessionBinding } | { ok: false; reason: string };

/**
 * Find and re-check the session binding the environment names
 * (`TWINLOCK_RUN`, `TWINLOCK_EXECUTOR`, `TWINLOCK_SESSION`, set by
 * `twinlock exec`). Reads only the binding, the run's checkpoint and the
 * checkout: never the suite or the run file's events. Everything the agent
 * could have changed (the env, the checkout) is checked against what the
 * gate home recorded; the agent cannot write the home.
 */
/** Why a call with no session variables has no binding: the one verdict verifyBinding reaches without reading a file. */
export const NO_SESSION = "no twinlock session is bound (TWINLOCK_RUN, TWINLOCK_EXECUTOR or TWINLOCK_SESSION unset)";

/** True when the environment names a session at all (TWINLOCK_RUN, TWINLOCK_EXECUTOR and TWINLOCK_SESSION set). */
export function namesSession(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.TWINLOCK_RUN && env.TWINLOCK_EXECUTOR && env.TWINLOCK_SESSION);
}

export function verifyBinding(env: NodeJS.ProcessEnv, homeArg: string | undefined, now: Date): BindingVerdict {
  const runEnv = env.TWINLOCK_RUN;
  const executor = env.TWINLOCK_EXECUTOR;
  const secret = env.TWINLOCK_SESSION;
  if (!runEnv || !executor || !secret) return { ok: false, reason: NO_SESSION };
  // Only the home the installed command names: TWINLOCK_HOME, XDG_STATE_HOME and HOME are the agent's to shape.
  if (homeArg === undefined)
    return {
      ok: false,
      reason: "the hook command names no gate home (--home DIR); reinstall it with `twinlock hooks install --agent NAME`",
    };
  const homeDir = resolveHomeDir(homeArg);
  const homeProblem = unsafeHome(homeDir);
  if (homeProblem) return { ok: false, reason: homeProblem };
  const runFile = resolveRealPath(runEnv, process.cwd());
  let text: string;
  try {
    text = readFileSync(bindingFile(homeDir, runFile, executor), "utf8");
  } catch {
    return { ok: false, reason: `no session of ${executor} on ${runFile} is bound in gate home ${homeDir}` };
  }
  const b = parseSessionBinding(text);
  if ("problem" in b) return { ok: false, reason: b.problem };
  if (b.run_file !== runFile || b.executor !== executor) return { ok: false, reason: "the binding names another run or executor" };
  if (secretDigest(secret) !== b.secret_sha256) return { ok: false, reason: "TWINLOCK_SESSION is not this binding's secret" };
  if (!descendsFrom(b.pid))
    return { ok: false, reason: `this call does not come from below the exec process ${b.pid} that bound the session` };
  if (b.consent_expires_at !== null && !(now.getTime() < Date.parse(b.consent_expires_at)))
    return { ok: false, reason: `the consent expired at ${b.consent_expires_at}` };
  const head = checkpointHead(homeDir, b.run_id);
  if (head !== `${b.checkpoint.seq}:${b.checkpoint.head}`)
    return { ok: false, reason: `run ${b.run_id} was written since the session was bound (a stop, a close or a new revision)` };
  const checkout = checkoutProblem(b);
  if (checkout) return { ok: false, reason: checkout };
  return { ok: true, binding: b };
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

function checkpointHead(homeDir: string, runId: string): string | undefined {
  if (!/^run_[0-9a-f]{16}$/.test(runId)) return undefined;
  try {
    const c = JSON.parse(readFileSync(path.join(homeDir, "runs", `${runId}.json`), "utf8"));
    return `${c.seq}:${c.head}`;
  } catch {
    return undefined;
  }
}

/** Where /proc exists (Linux), the call must come from a process below the exec that bound the session. */
function descendsFrom(pid: number): boolean {
  if (!existsSync("/proc/self/stat")) return true;
  let current = process.ppid;
  for (let i = 0; i < 128 && current > 1; i++) {
    if (current === pid) return true;
    try {
      const stat = readFileSync(`/proc/${current}/stat`, "utf8");
      current = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    } catch {
      return false;
    }
  }
  return false;
}

/** The checkout holds exactly the approved files with their approved bytes, or what differs. */
function checkoutProblem(b: SessionBinding): string | undefined {
  const expected = new Map(b.manifest.map((f) => [f.path, f]));
  const seen = new Set<string>();
  const walk = (rel: string): string | undefined => {
    let entries: string[];
    try {
      entries = readdirSync(path.join(b.checkout_dir, rel));
    } catch {
      return `the checkout ${b.checkout_dir} cannot be read`;
    }
    for (const name of entries) {
      const r = rel === "" ? name : `${rel}/${name}`;
      const abs = path.join(b.checkout_dir, r);
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
