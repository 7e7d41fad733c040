import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isWriterAlive } from "../store/is-process-alive.js";
import { IDENTITY_TAG, identitySuffix } from "../store/process-start.js";

/** The session folders exec and plan make in the system's temporary folder: exec's checkout, the MCP relay's socket. */
export type SessionTempKind = "exec" | "mcp";

/** `twinlock-KIND-PID[-TAG]-XXXXXX`: the maker's PID and (since tags) its identity tag, then mkdtemp's part. */
const LEFT = new RegExp(`^twinlock-(?:exec|mcp)-(\\d{1,10})(?:-(?<tag>${IDENTITY_TAG}))?-[A-Za-z0-9]{6}$`);

/**
 * A new private folder (0700) in the system's temporary folder, named
 * `twinlock-KIND-PID-XXXXXX` after this process. Its maker removes it when
 * it ends; one whose maker was killed (SIGKILL leaves no time to) is removed
 * by the next session that starts: before making its own, each removes the
 * folders of this kind whose process is gone, this user's real folders only
 * (never a link, never another user's).
 */
export function makeSessionTempDir(kind: SessionTempKind, tmp = os.tmpdir()): string {
  removeDeadSessionTempDirs(tmp);
  return mkdtempSync(path.join(tmp, `twinlock-${kind}-${process.pid}${identitySuffix()}-`));
}

/** Remove the session folders in `tmp` of processes that no longer exist (see makeSessionTempDir). */
export function removeDeadSessionTempDirs(tmp = os.tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(tmp);
  } catch {
    return;
  }
  const uid = typeof process.geteuid === "function" ? process.geteuid() : undefined;
  for (const name of names) {
    const m = LEFT.exec(name);
    if (!m || isWriterAlive(Number(m[1]), m.groups?.tag)) continue;
    const dir = path.join(tmp, name);
    const stat = lstatSync(dir, { throwIfNoEntry: false });
    if (!stat?.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
    removeReadOnlyTree(dir);
  }
}

/** Remove `dir` and everything in it, making its read-only folders (exec's checkout) writable first; links are not followed. */
export function removeReadOnlyTree(dir: string): void {
  const open = (d: string) => {
    try {
      chmodSync(d, 0o700);
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) open(path.join(d, e.name));
    } catch {
      // gone already, or not ours: rmSync reports what matters
    }
  };
  open(dir);
  rmSync(dir, { recursive: true, force: true });
}
