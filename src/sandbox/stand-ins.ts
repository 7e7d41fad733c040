import { randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { isSameProcess, processIdentity } from "../home/process-identity.js";
import type { BindingProcess } from "../home/session-binding.js";

/** A configuration file exec put in place for the session, so that the sandbox mounts it read-only. */
export interface StandIn {
  path: string;
  content: string;
  dev: number;
  ino: number;
}

/**
 * The folder in a tool's state folder where each exec (or plan) that uses
 * it says which stand-ins it made: a name the sandbox mounts read-only
 * (STAND_INS_FOLDER is configuration for every tool), so a confined agent
 * cannot forge or remove an entry.
 */
export const STAND_INS_FOLDER = ".twinlock-stand-ins";

/**
 * The sessions sharing one state folder, and the stand-ins they made. Two
 * execs on one CODEX_HOME (or ~/.gemini, ~/.claude) at once do not clobber
 * each other: each registers before it makes or finds a stand-in, and a
 * stand-in is removed only by the last session to end, once no live
 * session is registered (an entry whose process is gone counts as ended).
 * Until then it stays, as the other session's sandbox mounted it.
 */
export class StandInRegistry {
  readonly #dir: string;
  readonly #entry: string;
  readonly #made: StandIn[] = [];

  constructor(stateDir: string) {
    this.#dir = path.join(stateDir, STAND_INS_FOLDER);
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    const me = processIdentity();
    // One process may hold two sessions (a test does): the entry's name is its own.
    this.#entry = path.join(this.#dir, `${me.pid}-${me.start ?? "0"}-${randomBytes(6).toString("hex")}.json`);
    this.#save();
  }

  /** The stand-ins this session made. */
  get made(): readonly StandIn[] {
    return this.#made;
  }

  /** Make `file` with `content` when nothing is there (not even a link), and record it; undefined when something is. */
  make(file: string, content: string): StandIn | undefined {
    const s = makeStandIn(file, content);
    if (s) {
      this.#made.push(s);
      this.#save();
    }
    return s;
  }

  /**
   * This session ended: its entry becomes an orphan's; then, when no live
   * session is registered, every stand-in of the orphans (and of sessions
   * that died) still as it was made is removed, with their entries.
   */
  release(): void {
    const orphan = path.join(this.#dir, `orphan-${path.basename(this.#entry)}`);
    try {
      renameSync(this.#entry, orphan);
    } catch {
      // gone already
    }
    const entries = listEntries(this.#dir);
    if (entries.some((e) => e.live)) return;
    for (const e of entries) {
      removeStandIns(e.standIns);
      try {
        unlinkSync(e.file);
      } catch {
        // removed by another session ending now
      }
    }
  }

  #save(): void {
    const me = processIdentity();
    const tmp = `${this.#entry}.tmp`;
    writeFileSync(tmp, JSON.stringify({ process: me, stand_ins: this.#made }));
    renameSync(tmp, this.#entry);
  }
}

/** Every entry in the registry: its file, whether its session is alive, and its stand-ins. */
function listEntries(dir: string): { file: string; live: boolean; standIns: StandIn[] }[] {
  const out: { file: string; live: boolean; standIns: StandIn[] }[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    const file = path.join(dir, name);
    try {
      // Written by exec itself, mounted read-only in every sandbox: a small file; one over 1 MiB is not one of ours.
      if (lstatSync(file).size > 1 << 20) continue;
      const e = JSON.parse(readFileSync(file, "utf8")) as { process?: BindingProcess; stand_ins?: StandIn[] };
      const live = !name.startsWith("orphan-") && e.process !== undefined && isSameProcess(e.process);
      out.push({ file, live, standIns: Array.isArray(e.stand_ins) ? e.stand_ins : [] });
    } catch {
      // being written, or not ours: skipped
    }
  }
  return out;
}

/** Make `file` with `content` when nothing is there (not even a link), or undefined when something is. */
export function makeStandIn(file: string, content: string): StandIn | undefined {
  try {
    lstatSync(file);
    return undefined;
  } catch {
    // not there: made below
  }
  let fd: number;
  try {
    fd = openSync(file, "wx", 0o644);
  } catch (error) {
    // Made since, by another exec on the same state folder: it is that one's, and mounted read-only as it is.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return undefined;
    throw error;
  }
  try {
    writeFileSync(fd, content);
    const st = fstatSync(fd);
    return { path: file, content, dev: st.dev, ino: st.ino };
  } finally {
    closeSync(fd);
  }
}

/** Remove each stand-in that is still the one exec made, as exec made it (one replaced since is the person's: kept). */
export function removeStandIns(standIns: readonly StandIn[]): void {
  for (const s of standIns) {
    try {
      const st = lstatSync(s.path);
      if (st.isFile() && st.dev === s.dev && st.ino === s.ino && readFileSync(s.path, "utf8") === s.content) unlinkSync(s.path);
    } catch {
      // gone already
    }
  }
}
