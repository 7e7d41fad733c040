import { existsSync, mkdirSync, readdirSync, realpathSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { loadNodeCrypto } from "../crypto/load-node-crypto.js";
import { readRegularFile } from "../input/read-regular-file.js";
import { atomicWriteFile } from "../store/atomic-write.js";
import { MemoryParseCache, type ParseCache } from "../suite/parse-cache.js";
import { requireSafeHomeFolder, resolveHomeDir } from "./gate-home.js";

const FORMAT = "twinlock-parse-cache/1";
/** Largest cache file read; a 10,000-prompt suite's is about 60 MiB. */
const MAX_CACHE_BYTES = 512 * 1024 * 1024;

/** A suite's parse cache in the gate home, and how to write it back. */
export interface HomeParseCache {
  cache: ParseCache;
  /** Write the entries used back, atomically; a cache that cannot be written is left as it was (it only saves time). */
  save(): void;
}

/**
 * The parse cache of the suite at `suiteRoot`, kept in the gate home
 * (`cache/prompts-<hash of the suite's real path>.json`), or undefined when
 * there is no usable home: none yet (a cache never creates one), or one
 * this user could not trust (see `requireSafeHomeFolder`). The home is the
 * one place the agent cannot write, so an entry there is what twinlock
 * itself parsed from those bytes.
 */
export function openHomeParseCache(suiteRoot: string, homeDir?: string): HomeParseCache | undefined {
  let dir: string;
  let root: string;
  try {
    dir = resolveHomeDir(homeDir);
    if (!existsSync(path.join(dir, "home.json"))) return undefined;
    requireSafeHomeFolder(dir);
    root = realpathSync(suiteRoot);
  } catch {
    return undefined;
  }
  const file = path.join(dir, "cache", `prompts-${loadNodeCrypto().createHash("sha256").update(root).digest("hex").slice(0, 32)}.json`);
  // Entries are what this exact build of twinlock parsed: another build (an upgrade, an older checkout) starts afresh.
  const format = `${FORMAT} ${codeIdentity()}`;
  const cache = new MemoryParseCache(readEntries(file, format));
  return {
    cache,
    save() {
      if (!cache.changed) return;
      try {
        mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
        atomicWriteFile(file, cache.toJson(format), 0o600);
        pruneStale(path.dirname(file));
      } catch {
        // Not written: the next load parses again.
      }
    },
  };
}

/**
 * Which build is running: the one-file build's identity on disk when twinlock
 * runs from it (`__filename` is dist/twinlock.cjs), else a value of this
 * process alone (run from source, nothing is shared between processes).
 */
function codeIdentity(): string {
  codeId ??= (() => {
    try {
      // The build's size, modification time and inode: any rebuild or another checkout changes them, and reading
      // them costs a stat where hashing the build would cost milliseconds on every call.
      if (typeof __filename === "string" && __filename.endsWith(".cjs")) {
        const st = statSync(__filename);
        return loadNodeCrypto().createHash("sha256").update(`${st.size}:${st.mtimeMs}:${st.ino}:${st.dev}`).digest("hex").slice(0, 32);
      }
    } catch {
      // Unreadable: fall through to a value of this process.
    }
    return `process-${process.pid}-${loadNodeCrypto().randomBytes(8).toString("hex")}`;
  })();
  return codeId;
}
let codeId: string | undefined;

/** Caches of suites not loaded for this long are removed when another is written, so moved or deleted suites leave nothing behind for long. */
const STALE_AFTER_MS = 30 * 24 * 3600 * 1000;

function pruneStale(dir: string): void {
  const now = Date.now();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isFile() || !/^prompts-[0-9a-f]{32}\.json$/.test(entry.name)) continue;
    const file = path.join(dir, entry.name);
    try {
      if (now - statSync(file).mtimeMs > STALE_AFTER_MS) unlinkSync(file);
    } catch {
      // Gone already, or not ours to remove: left as it is.
    }
  }
}

function readEntries(file: string, expected: string): Array<[string, Record<string, unknown>]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readRegularFile(file, "parse cache", { noFollow: true, maxBytes: MAX_CACHE_BYTES }).toString("utf8"));
  } catch {
    return [];
  }
  const { format, entries } = (parsed ?? {}) as { format?: unknown; entries?: unknown };
  if (format !== expected || entries === null || typeof entries !== "object" || Array.isArray(entries)) return [];
  return Object.entries(entries as Record<string, unknown>).filter(
    (e): e is [string, Record<string, unknown>] =>
      /^[0-9a-f]{64}$/.test(e[0]) && e[1] !== null && typeof e[1] === "object" && !Array.isArray(e[1]),
  );
}
