import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { atomicWriteFile, fsyncDir, removeDeadTempFiles } from "../store/atomic-write.js";
import { withFileLock } from "../store/run-file-lock.js";
import type { GateHome } from "./gate-home.js";
import { bindingFile, type SessionBinding } from "./session-binding.js";

/** Record a session binding in the gate home: locked, atomic, durable, readable by its owner only. */
export async function writeSessionBinding(home: GateHome, binding: SessionBinding): Promise<string> {
  const file = bindingFile(home.dir, binding.run_file, binding.executor);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  await withFileLock(file, () => {
    removeDeadTempFiles(file);
    atomicWriteFile(file, `${JSON.stringify(binding, null, 2)}\n`, 0o600);
  });
  return file;
}

/** Remove a session's binding, if it is still the one this session wrote (a later exec of the same executor keeps its own). */
export async function removeSessionBinding(home: GateHome, binding: SessionBinding): Promise<void> {
  const file = bindingFile(home.dir, binding.run_file, binding.executor);
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
