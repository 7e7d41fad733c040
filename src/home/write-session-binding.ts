import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync } from "node:fs";
import path from "node:path";
import { resolveRealPath } from "../input/resolve-real-path.js";
import { atomicWriteFile, fsyncDir, removeDeadTempFiles } from "../store/atomic-write.js";
import { withFileLock } from "../store/run-file-lock.js";
import { resolveRunFile } from "../store/run-folder.js";
import type { GateHome } from "./gate-home.js";
import { bindingEndedFile, bindingFile, parseSessionBinding, type SessionBinding } from "./session-binding.js";

/** The run file as a session binding names it (and a stop finds the binding by): its real path. */
export function sessionRunFile(runFile: string): string {
  return resolveRealPath(resolveRunFile(runFile), "/");
}

/** Record a session binding in the gate home: locked, atomic, durable, readable by its owner only. */
export async function writeSessionBinding(home: GateHome, binding: SessionBinding): Promise<string> {
  const file = bindingFileOf(home, binding);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  await withFileLock(file, () => {
    removeDeadTempFiles(file);
    atomicWriteFile(file, `${JSON.stringify(binding, null, 2)}\n`, 0o600);
    rmSync(bindingEndedFile(file), { force: true });
  });
  return file;
}

/** Remove a session's binding, if it is still the one this session wrote (a later exec of the same executor keeps its own). */
export async function removeSessionBinding(home: GateHome, binding: SessionBinding): Promise<void> {
  const file = bindingFileOf(home, binding);
  await withFileLock(file, () => {
    let current: string;
    try {
      current = readFileSync(file, "utf8");
    } catch {
      return;
    }
    if (!current.includes(binding.secret_sha256)) return;
    rmSync(file, { force: true });
    fsyncDir(path.dirname(file));
  });
}

/** The file a binding lives in, in `home`. */
export function bindingFileOf(home: GateHome, binding: SessionBinding): string {
  return bindingFile(home.dir, binding.run_file, binding.kind, binding.kind === "planner" ? binding.planner : binding.executor);
}

/**
 * Renew a session's lease (the binding file's modification time, which the
 * hook reads): true when the binding is still this session's, false when it
 * was ended (a stop, another session of the same prompt) and so stays ended.
 */
export async function renewSessionBinding(home: GateHome, binding: SessionBinding, now: Date = new Date()): Promise<boolean> {
  const file = bindingFileOf(home, binding);
  return withFileLock(file, () => {
    let current: string;
    try {
      current = readFileSync(file, "utf8");
    } catch {
      return false;
    }
    if (!current.includes(binding.secret_sha256)) return false;
    utimesSync(file, now, now);
    return true;
  });
}

/**
 * End every session bound to the run file `runFile` (its real path), or to
 * the pair of `planner` only: their bindings leave the gate home, so the hook
 * denies their next call. Only locks in the gate home are taken, which the
 * agent cannot hold: a stop ends the sessions even while the agent keeps the
 * lock beside the run file. `why` (e.g. "!STOP:halt was raised on the run by
 * alice") is left in a note beside each removed binding, for the hook's deny to
 * name. Returns the executors and planners whose sessions ended.
 */
export async function endSessionsOfRun(home: GateHome, runFile: string, planner?: string, why?: string): Promise<string[]> {
  const dir = path.join(home.dir, "bindings");
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => /^[0-9a-f]{32}\.json$/.test(name));
  } catch {
    return [];
  }
  const ended: string[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    await withFileLock(file, () => {
      let binding: ReturnType<typeof parseSessionBinding>;
      try {
        binding = parseSessionBinding(readFileSync(file, "utf8"));
      } catch {
        return;
      }
      if ("problem" in binding || binding.run_file !== runFile || (planner !== undefined && binding.planner !== planner)) return;
      if (why !== undefined)
        atomicWriteFile(bindingEndedFile(file), `${JSON.stringify({ why: why.slice(0, 500), at: new Date().toISOString() })}\n`, 0o600);
      rmSync(file, { force: true });
      fsyncDir(dir);
      ended.push(binding.kind === "planner" ? `${binding.planner} (planner)` : binding.executor);
    });
  }
  return ended;
}
