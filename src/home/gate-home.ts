import "../schemas/zod-setup.js";
import {
  closeSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { z } from "zod/mini";
import { loadNodeCrypto } from "../crypto/load-node-crypto.js";
import { IntegrityError, UsageError } from "../errors/errors.js";
import { requirePlainPath } from "../input/parse-input.js";
import { lazySchema } from "../schemas/lazy-schema.js";
import { fsyncDir } from "../store/atomic-write.js";
import { resolveHomeDir } from "./resolve-home-dir.js";
import type { SharedHome } from "./shared-home.js";

export { resolveHomeDir };

/**
 * The gate home (SPEC §9): the human's (or the gate server's) folder, out of
 * the agent's reach. It holds the suite pins, the run checkpoints, the
 * consumed consents and the frozen handoff bytes. Everything the gate is
 * judged by comes from here, never from the run file or the suite folder.
 */
export interface GateHome {
  /** Absolute path of the home folder. */
  dir: string;
  /** Random identity of this home; every run records the home it was created in. */
  id: string;
  /** Set when the home is a server's copy of a team database's trust files (`--store postgres://…`). */
  shared?: SharedHome;
}

const HomeFileSchema = lazySchema("gate-home.HomeFileSchema", () =>
  z.strictObject({
    format: z.literal("twinlock-home/1"),
    home_id: z.string().check(z.regex(/^home_[0-9a-f]{16}$/)),
    created_at: z.string(),
  }),
);

/**
 * Open the gate home, creating it `0700` when it does not exist. Refuses,
 * as ssh refuses loose key files, a home that is group- or world-writable or
 * owned by another user: whoever can write the home can rewrite what the gate trusts.
 */
export function openGateHome(given?: string, options: { create?: boolean } = {}): GateHome {
  const dir = resolveHomeDir(given);
  requirePlainPath(dir, "gate home");
  let exists = true;
  try {
    lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      throw new UsageError(`gate home ${dir} cannot be read (${(error as NodeJS.ErrnoException).code}); fix its permissions`, {
        code: "HOME_UNREADABLE",
        cause: error,
      });
    exists = false;
  }
  if (!exists) {
    if (options.create === false)
      throw new UsageError(
        `gate home ${dir} does not exist${given === undefined && !nonEmpty(process.env.TWINLOCK_HOME) ? " (TWINLOCK_HOME is not set, so the default is used)" : ""}; if your home is elsewhere, set TWINLOCK_HOME or pass --home DIR; a person creates a new one by pinning a suite (\`twinlock trust pin --suite DIR --key FILE\`)`,
      );
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new UsageError(
        `cannot create gate home ${dir} (${(error as NodeJS.ErrnoException).code}); pass --home DIR or set TWINLOCK_HOME to a folder you own`,
        { cause: error },
      );
    }
  }
  requireSafeHomeFolder(dir);
  const home = { dir, id: readOrCreateHomeId(dir) };
  // Made up front, so that a refused command leaves the home exactly as it was.
  if (options.create !== false) for (const sub of ["runs", "consumed", "blobs", "tmp"]) homeSubdir(home, sub);
  return home;
}

/** Throw unless `dir` is a folder owned by this user that nobody else can write. */
export function requireSafeHomeFolder(dir: string): void {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(dir);
  } catch (error) {
    throw new UsageError(`gate home ${dir} cannot be read (${(error as NodeJS.ErrnoException).code}); fix its permissions`, {
      code: "HOME_UNREADABLE",
      cause: error,
    });
  }
  if (!stat.isDirectory()) throw new UsageError(`gate home ${dir} is not a folder; pass --home DIR naming a folder`);
  const mode = stat.mode & 0o777;
  if ((mode & 0o022) !== 0)
    throw new UsageError(
      `gate home ${dir} is writable by ${mode & 0o002 ? "every user" : "its group"} (mode ${mode.toString(8)}); anyone who can write it can rewrite what the gate trusts — run chmod 700 ${dir}`,
    );
  const uid = typeof process.geteuid === "function" ? process.geteuid() : undefined;
  if (uid !== undefined && uid !== 0 && stat.uid !== uid)
    throw new UsageError(`gate home ${dir} belongs to user ${stat.uid}, not to you (${uid}); use your own home (--home DIR)`);
}

/** The home as messages name it: "gate home /path", or for a team store's copy, the database it copies. */
export function homeLabel(home: GateHome): string {
  return home.shared ? home.shared.label : `gate home ${home.dir}`;
}

/**
 * A sub-folder of the home, made `0700` when missing, one level at a time
 * below the home and never the home itself: a home removed while this
 * process still works in it (a test's world removed under a server still
 * closing, a person's `rm -rf`) is refused, not rebuilt in part.
 */
export function homeSubdir(home: GateHome, ...parts: string[]): string {
  let dir = home.dir;
  for (const part of parts) {
    dir = path.join(dir, part);
    if (statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EEXIST" && statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
      if (code === "ENOENT" && !statSync(home.dir, { throwIfNoEntry: false })?.isDirectory())
        throw new UsageError(`gate home ${home.dir} is gone (removed while twinlock was using it); restore it or open another home`, {
          code: "HOME_UNREADABLE",
          cause: error,
        });
      throw new UsageError(`cannot make the gate home's folder ${dir} (${code}); fix the gate home's permissions`, {
        code: "HOME_UNREADABLE",
        cause: error,
      });
    }
    // Made durably: a record written into a new folder is lost with the folder if the folder's own entry is not fsynced.
    fsyncDir(path.dirname(dir));
  }
  return dir;
}

/** The names in one of the home's folders; none when the folder was never made. */
export function listHomeSubdir(home: GateHome, name: string): string[] {
  try {
    return readdirSync(path.join(home.dir, name));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return [];
    throw new UsageError(`cannot list the gate home's ${name} (${code}); fix the gate home's permissions`, {
      code: "HOME_UNREADABLE",
      cause: error,
    });
  }
}

function readOrCreateHomeId(dir: string): string {
  const file = path.join(dir, "home.json");
  const existing = readHomeFile(file);
  if (existing) return existing;
  const body = `${JSON.stringify({ format: "twinlock-home/1", home_id: `home_${loadNodeCrypto().randomBytes(8).toString("hex")}`, created_at: new Date().toISOString() })}\n`;
  const tmp = `${file}.${process.pid}.${loadNodeCrypto().randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(tmp, "wx", 0o600);
  try {
    writeSync(fd, body);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    // link() never replaces: of two processes creating the home at once, one identity wins and both read it.
    linkSync(tmp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    unlinkSync(tmp);
  }
  fsyncDir(dir);
  const made = readHomeFile(file);
  if (!made) throw new IntegrityError(`gate home ${dir} has an unreadable home.json; restore it from backup`, { code: "HOME_DAMAGED" });
  return made;
}

function readHomeFile(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new UsageError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code}); fix the gate home's permissions`, {
      code: "HOME_UNREADABLE",
      cause: error,
    });
  }
  let parsed: ReturnType<typeof HomeFileSchema.safeParse>;
  try {
    parsed = HomeFileSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = { success: false } as ReturnType<typeof HomeFileSchema.safeParse>;
  }
  if (!parsed.success)
    throw new IntegrityError(`${file} is not a twinlock home file; the gate home was damaged — restore it from backup`, {
      code: "HOME_DAMAGED",
    });
  return parsed.data.home_id;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
