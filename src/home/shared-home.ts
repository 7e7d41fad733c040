import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../errors/errors.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { atomicWriteFile, fsyncDir, mkdirDurable, removeDeadTempFiles } from "../store/atomic-write.js";
import { withFileLock } from "../store/run-file-lock.js";
import type { GateHome } from "./gate-home.js";

/** A change to one of the home's trust files: the new text (null removes the file) and what the caller gets back. */
export type HomeFileChange<T> = (text: string | undefined) => { text: string | null; result: T };

/**
 * A gate home whose trust files live in a team's database (SPEC §10): the
 * database is the trust root, and each server's home folder is its verified
 * copy. `pins.json`, `reviewers.json` and the agent tokens are changed only
 * in one database transaction that locks the file's row, then copied into
 * the folder; the folder is brought up to the database's version before
 * anything reads it (`refresh`). Frozen bytes are stored by sha256 in the
 * database with the event that names them, and fetched into the folder
 * (checked against their sha256) before they are read.
 */
export interface SharedHome {
  /** What holds the files, for messages ("PostgreSQL store postgres://…/team"). */
  readonly label: string;
  /** The gate home folder the copy is kept in (the server's `--home`). */
  readonly homeDir: string;
  /** Change one trust file under the database's lock; `change` sees the database's text, and the folder gets the result. */
  update<T>(name: string, change: HomeFileChange<T>): Promise<T>;
  /** Copy every trust file the database changed since this process last looked into the home folder. */
  refresh(): Promise<void>;
  /** Put these frozen files, verified by their sha256, into the home folder if they are not there. */
  fetchFrozen(entries: readonly ManifestEntry[]): Promise<void>;
}

/** The trust files a shared home keeps in its database, by their name in the home folder. */
export function isSharedHomeFile(name: string): boolean {
  return (
    name === "pins.json" ||
    name === "reviewers.json" ||
    name === "gate-key.pem" ||
    name === "gate-keys.json" ||
    /^tokens\/tok_[0-9a-f]{16}\.(json|key)$/.test(name)
  );
}

/**
 * Change one of the home's trust files: in the database when the home is
 * shared, else under the file's lock in the folder. `change` gets the text
 * as it is now (read after the lock is taken) and returns the new text,
 * written atomically and durably; what `change` throws leaves it untouched.
 */
export async function updateHomeFile<T>(home: GateHome, name: string, change: HomeFileChange<T>): Promise<T> {
  if (!isSharedHomeFile(name)) throw new UsageError(`${name} is not one of the gate home's trust files`);
  if (home.shared) return home.shared.update(name, change);
  const file = homeFilePath(home, name);
  mkdirDurable(path.dirname(file));
  return withFileLock(file, () => {
    removeDeadTempFiles(file);
    const { text, result } = change(readHomeText(file));
    writeHomeText(file, text);
    return result;
  });
}

/** Where a trust file lives in the home folder. */
export function homeFilePath(home: GateHome, name: string): string {
  return path.join(home.dir, ...name.split("/"));
}

/** A trust file's text, or undefined when there is none. */
export function readHomeText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new UsageError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code}); fix the gate home's permissions`, {
      code: "HOME_UNREADABLE",
      cause: error,
    });
  }
}

/** Write (or, with null, remove) a trust file, atomically and durably, private to the home's owner. */
export function writeHomeText(file: string, text: string | null): void {
  if (text === null) {
    rmSync(file, { force: true });
    fsyncDir(path.dirname(file));
    return;
  }
  mkdirDurable(path.dirname(file));
  atomicWriteFile(file, text, 0o600);
}
