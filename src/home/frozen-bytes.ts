import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { IntegrityError, RefusalError, UsageError } from "../errors/errors.js";
import {
  checkReadiness,
  judgeHandoff,
  type ReadinessReport,
  type ReadinessSummary,
  summarizeReadiness,
} from "../handoff/check-readiness.js";
import type { HandoffFormat } from "../handoff/handoff-format.js";
import { folderSource, type HandoffSource } from "../handoff/handoff-source.js";
import {
  hardLinksProblem,
  listHandoffFiles,
  MAX_HANDOFF_BYTES,
  type ManifestEntry,
  manifestHash,
  resolveHandoffRoot,
} from "../handoff/hash-handoff.js";
import { type HandoffFormatRecipe, handoffFormatOf, handoffFormatRecipe } from "../handoff/select-handoff-format.js";
import { openBeneath } from "../input/open-beneath.js";
import { readFailureCode, readRegularFile } from "../input/read-regular-file.js";
import { runOffThread } from "../offload/run-off-thread.js";
import { atomicWriteFile, diskFullRefusal, fsyncDir, isDiskFull } from "../store/atomic-write.js";
import { removeLeftoversOfDeadWriters } from "../store/is-process-alive.js";
import { IDENTITY_TAG, identitySuffix } from "../store/process-start.js";

/** `tmp/snap-PID-TOKEN[-TAG]/`: a freeze's copy, by its maker's PID and (since tags) identity tag. */
const SNAPSHOT_TAIL = new RegExp(`^(\\d{1,10})-[0-9a-f]{12}(?:-(?<tag>${IDENTITY_TAG}))?$`);

import { queueWaitMs } from "../store/queue-lock.js";
import {
  decideKeep,
  type FrozenStanding,
  frozenBudget,
  frozenStanding,
  reserveFrozenBytes,
  storedBytes,
  storingRefusal,
} from "./frozen-quota.js";
import { gateFolders } from "./gate-folders.js";
import { type GateHome, homeLabel, homeSubdir } from "./gate-home.js";

const CHUNK = 1024 * 1024;
/** The copy skips writing blocks of zeros this size (they stay holes, taking no space): a sparse file stays sparse. */
const BLOCK = 4096;
const ZEROS = Buffer.alloc(BLOCK);

/**
 * A handoff copied into the gate home at one instant: the manifest and hash
 * of exactly the copied bytes, a private folder holding them (for readiness),
 * and every file stored by sha256 in the home's content-addressed store.
 */
export interface HandoffSnapshot {
  hash: string;
  files: ManifestEntry[];
  /** The private copy in the home, laid out like the handoff. */
  dir: string;
  /** Readiness of the copy in the format asked for (judged off the thread as the copy was made). */
  readiness?: ReadinessSummary;
  /**
   * Store every copied file in the home's content-addressed store, durably, after checking the quota again
   * against what the home holds now and what other freezes are storing at the same moment (no lock: see
   * `decideKeep`): call once the freeze is decided.
   */
  keep(): Promise<void>;
  /** Remove the private copy and release the freeze's reservation (kept blobs stay). */
  dispose(): Promise<void>;
}

/** The home as a worker thread is given it: its folder and identity (a shared home's database stays on the calling thread). */
function plainHome(home: GateHome): GateHome {
  return { dir: home.dir, id: home.id };
}

/**
 * Copy every file of a handoff folder into the home, hashing the bytes as
 * they are copied (SPEC §9 frozen bytes). What is hashed is what is stored,
 * so an edit during or after the copy cannot slip in. Symlinks and special
 * files are refused, as by `hashHandoff`. `confine` judges the folder's real
 * path before anything is read. The home's quota on frozen bytes (per run
 * when `options.runId` is given, and per home) is checked before anything is
 * copied, from the bytes the files take on disk, and a reservation of them
 * is held until `dispose` (freezes at once see each other's); it is checked
 * again as the copy is written, and once more by `keep`; a full disk is a
 * refusal that leaves nothing behind. With `options.format` the copy's
 * readiness is judged too. The listing, copy, hash, fsyncs and judgement run
 * on a worker thread (`runOffThread`): the caller's event loop goes on
 * turning whatever the handoff holds.
 */
export async function snapshotHandoff(
  home: GateHome,
  handoffDir: string,
  confine?: (realRoot: string) => void,
  options: { runId?: string; format?: HandoffFormat } = {},
): Promise<HandoffSnapshot> {
  // Never the home, nor a key folder, nor a folder holding one, by the name given and by its real path (a link in the
  // agent's folder into the home): the copy would take the home's keys and tokens along. Resolved once, before
  // listing (the rules admission's re-hash obeys too); every file is then opened and checked against this very path.
  const root = resolveHandoffRoot(handoffDir, gateFolders(home), confine);
  const plain = plainHome(home);
  const { rel, incoming } = await runOffThread("listHandoffForFreeze", { root });
  const reservation = await reserveFrozenBytes(home, options.runId, incoming, (_, runId, mine) =>
    runOffThread("frozenStanding", { home: plain, runId, mine }),
  );
  try {
    const recipe = options.format ? handoffFormatRecipe(options.format) : undefined;
    const copied = await runOffThread("copyHandoff", {
      home: plain,
      root,
      rel,
      runId: options.runId,
      standing: reservation.standing,
      format: recipe,
    });
    const dispose = async () => {
      try {
        // On the worker too: removing 20,000 files with the asynchronous rm schedules every unlink in one burst.
        await runOffThread("removeSnapshot", { dir: copied.dir });
      } finally {
        reservation.release();
      }
    };
    // A format built otherwise than from a suite (a test's) is judged here.
    const readiness = copied.readiness ?? (options.format ? summarizeReadiness(checkReadiness(copied.dir, options.format)) : undefined);
    return {
      hash: copied.hash,
      files: copied.files,
      dir: copied.dir,
      ...(readiness ? { readiness } : {}),
      keep: async () => {
        // Named with their sizes before they are stored: the collector never takes them before the run's record of them
        // is written, and every freeze storing at the same moment counts them.
        reservation.claim(copied.files.map((f, i) => ({ sha256: f.sha256, stored: copied.stored[i] ?? 0 })));
        try {
          const deadline = Date.now() + queueWaitMs();
          for (let delay = 1; ; delay = Math.min(delay * 2, 32)) {
            const pass = await runOffThread("keepSnapshot", {
              home: plain,
              dir: copied.dir,
              files: copied.files,
              stored: copied.stored,
              runId: options.runId,
              except: reservation.file,
            });
            if (pass.kept) return;
            // A freeze behind this one is storing bytes that fit only without this one's: it gives way, or stores
            // first (and this one is then judged against them), in a moment, unless its process is stopped.
            if (Date.now() > deadline) throw storingRefusal(home, pass.waitFor);
            await new Promise((r) => setTimeout(r, delay));
          }
        } catch (error) {
          // Refused: its claim goes at once, so no freeze ahead of it waits for it.
          reservation.release();
          throw error;
        }
      },
      dispose,
    };
  } catch (error) {
    reservation.release();
    throw error;
  }
}

/** The listing a freeze copies, and the bytes its files take on disk now (the quota's precheck): a worker's task. */
export function listHandoffForFreeze(input: { root: string }): { rel: string[]; incoming: number } {
  const rel = listHandoffFiles(input.root);
  let incoming = 0;
  for (const p of rel) {
    try {
      incoming += storedBytes(lstatSync(path.join(input.root, ...p.split("/"))));
    } catch {
      // Gone since the listing: the copy says so.
    }
  }
  return { rel, incoming };
}

/** Remove a freeze's private copy (a worker's task). */
export function removeSnapshot(input: { dir: string }): void {
  rmSync(input.dir, { recursive: true, force: true });
}

/** How many fsyncs are under way at once: the file system commits them together, where one by one each waits for its own. */
const PARALLEL_FSYNCS = 16;

/** fsync every path (files and folders), several at once. */
async function fsyncAll(paths: readonly string[]): Promise<void> {
  let next = 0;
  const one = async () => {
    while (next < paths.length) {
      const handle = await open(paths[next++] as string, "r");
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_FSYNCS, paths.length) }, one));
}

/**
 * The copy of a freeze (a worker's task): every listed file copied beneath
 * the real root into a private folder of the home's scratch space, hashed as
 * copied, counted against the quota as it is written, then made durable
 * (every file fsynced, several at once) and, given a format, judged.
 */
export async function copyHandoff(input: {
  home: GateHome;
  root: string;
  rel: string[];
  runId?: string;
  standing: FrozenStanding;
  format?: HandoffFormatRecipe;
}): Promise<{ hash: string; files: ManifestEntry[]; stored: number[]; dir: string; readiness?: ReadinessSummary }> {
  const { home, root, rel } = input;
  const budget = frozenBudget(home, input.runId, input.standing);
  const tmp = homeSubdir(home, "tmp");
  // The home's own scratch folder, out of the agent's reach: a dead freeze's copy is removed whole.
  removeLeftoversOfDeadWriters(tmp, "snap-", SNAPSHOT_TAIL, (entry) => rmSync(entry, { recursive: true, force: true }));
  const dir = path.join(tmp, `snap-${process.pid}-${randomBytes(6).toString("hex")}${identitySuffix()}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
    let total = 0;
    const stored: number[] = [];
    const targets: string[] = [];
    const linkedFiles = new Set<string>();
    const files: ManifestEntry[] = rel.map((p) => {
      const target = path.join(dir, ...p.split("/"));
      mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      const { stored: bytes, linked, ...digest } = copyHashing(root, p, target, MAX_HANDOFF_BYTES - total, home);
      total += digest.size;
      budget.add(digest.sha256, bytes);
      stored.push(bytes);
      // A file linked from the home's store is durable already.
      if (linked) linkedFiles.add(p);
      else targets.push(target);
      return { path: p, ...digest };
    });
    // Durable before anything names these bytes: the blobs `keep` links are these very files.
    await fsyncAll(targets);
    const readiness = input.format ? summarizeReadiness(readinessOfCopy(dir, handoffFormatOf(input.format), linkedFiles)) : undefined;
    return { hash: manifestHash(files), files, stored, dir, ...(readiness ? { readiness } : {}) };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    if (isDiskFull(error)) throw diskFullRefusal(error, tmp);
    throw error;
  }
}

/**
 * Readiness of a freeze's private copy, as `checkReadiness` judges a folder, but for the files linked from the home's
 * store: their second name is the store's own, so each counts as the one name the agent's file had when it was
 * opened (a file with a second name there was refused before it was hashed, see `copyHashing`).
 */
function readinessOfCopy(dir: string, format: HandoffFormat, linked: ReadonlySet<string>): ReadinessReport {
  const root = path.resolve(dir);
  const source = folderSource(root);
  const copy: HandoffSource = { ...source, linkCount: (file) => (linked.has(file) ? 1 : (source.linkCount?.(file) ?? 1)) };
  return { ...judgeHandoff(copy, format), dir: root };
}

/**
 * Store a freeze's copy in the home's content-addressed store, when the
 * quota has room for it (a worker's task, one look: see `decideKeep`): the
 * quota is checked again against what the home and the run hold now and
 * what other freezes are storing, before anything is stored, so freezes
 * that each fit alone cannot be kept past a limit together; then every file
 * is linked in, any the collector moved aside meanwhile linked again, and
 * each folder that gained one is fsynced once. `{kept: false}` names the
 * freeze storing at the same moment this one waits for.
 */
export async function keepSnapshot(input: {
  home: GateHome;
  dir: string;
  files: ManifestEntry[];
  stored: number[];
  runId?: string;
  except: string;
}): Promise<{ kept: true } | { kept: false; waitFor: number }> {
  const { home, dir, files } = input;
  const standing = frozenStanding(home, input.runId, input.except);
  const decision = decideKeep(
    home,
    input.runId,
    standing,
    files.map((f, i) => ({ sha256: f.sha256, stored: input.stored[i] ?? 0 })),
  );
  if (!decision.store) return { kept: false, waitFor: decision.waitFor };
  const blobs = path.join(home.dir, "blobs");
  const touched = new Set<string>();
  try {
    let madeFolder = false;
    const linkIn = (f: ManifestEntry) => {
      const target = blobPath(home, f.sha256);
      if (hasBlob(home, f.sha256)) return;
      if (mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 }) !== undefined) madeFolder = true;
      const staged = path.join(dir, ...f.path.split("/"));
      chmodSync(staged, 0o400);
      try {
        linkSync(staged, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      touched.add(path.dirname(target));
    };
    for (const f of files) linkIn(f);
    // Looked at again, now that the claim names them: a collector that moved one aside before it read the claim
    // puts it back; one moved before this look is linked again here from the copy (the same bytes).
    for (const f of files) linkIn(f);
    await fsyncAll([...touched, ...(madeFolder ? [blobs] : [])]);
    return { kept: true };
  } catch (error) {
    // Blobs stored before the disk filled are used by no run: `twinlock home gc` collects them.
    if (isDiskFull(error)) throw diskFullRefusal(error, blobs);
    throw error;
  }
}

/** Where the home keeps the bytes with this sha256. */
export function blobPath(home: GateHome, sha256: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new IntegrityError(`${sha256} is not a sha256 digest`);
  return path.join(home.dir, "blobs", sha256.slice(0, 2), sha256);
}

/** Whether the home holds bytes under this sha256 (not yet checked: `readBlob` checks them). */
export function hasBlob(home: GateHome, sha256: string): boolean {
  try {
    return lstatSync(blobPath(home, sha256)).isFile();
  } catch {
    return false;
  }
}

/**
 * Keep bytes a team store sent (SPEC §10) in the home's content-addressed
 * store, only once they hash to the name they were asked for.
 */
export function storeFetchedBlob(home: GateHome, sha256: string, bytes: Buffer): void {
  if (createHash("sha256").update(bytes).digest("hex") !== sha256)
    throw new IntegrityError(`the frozen bytes stored as ${sha256.slice(0, 12)}… do not hash to that; the database was edited by hand`, {
      code: "FROZEN_DAMAGED",
    });
  if (hasBlob(home, sha256)) return;
  const target = blobPath(home, sha256);
  mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  atomicWriteFile(target, bytes, 0o400);
}

/** Why a frozen file could not be opened, as the integrity failure it is (a reader's own bug is thrown as it is). */
export function blobReadFailure(home: GateHome, entry: ManifestEntry, error: unknown): Error {
  if (!(error instanceof UsageError)) return error as Error;
  return new IntegrityError(
    readFailureCode(error) === "ENOENT"
      ? `the frozen bytes of ${entry.path} (sha256 ${entry.sha256.slice(0, 12)}…) are missing from ${homeLabel(home)} (ENOENT); the frozen handoff cannot be shown or used — freeze it again`
      : `the frozen bytes of ${entry.path} in ${homeLabel(home)} are damaged (${error.message})`,
    { path: entry.path },
  );
}

/** The frozen bytes of one manifest entry, verified against its size and sha256. */
export function readBlob(home: GateHome, entry: ManifestEntry): Buffer {
  let buffer: Buffer;
  try {
    buffer = readRegularFile(blobPath(home, entry.sha256), "frozen blob", { noFollow: true, maxBytes: entry.size });
  } catch (error) {
    throw blobReadFailure(home, entry, error);
  }
  if (buffer.length !== entry.size)
    throw new IntegrityError(
      `the frozen bytes of ${entry.path} in ${homeLabel(home)} are damaged (size ${buffer.length}, frozen ${entry.size})`,
      { code: "FROZEN_DAMAGED" },
    );
  if (createHash("sha256").update(buffer).digest("hex") !== entry.sha256)
    throw new IntegrityError(
      `the frozen bytes of ${entry.path} in ${homeLabel(home)} no longer hash to ${entry.sha256}; they were damaged`,
      { code: "FROZEN_DAMAGED" },
    );
  return buffer;
}

/** Every frozen file's bytes present and intact in the home, or the problems found. */
export function verifyFrozenBytes(home: GateHome, files: readonly ManifestEntry[]): string[] {
  const problems: string[] = [];
  for (const f of files) {
    try {
      readBlob(home, f);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  return problems;
}

/**
 * Check, before anything is decided, that `target` can receive a checkout,
 * and return the real path to write it at: outside the gate home, new (or an
 * empty folder owned by this user), under a parent whose real path no other
 * user can rearrange — every folder from it up to `/` owned by this user or
 * root and not group/world-writable, or sticky like `/tmp` (as ssh's
 * StrictModes judges key folders). Links on the way are resolved once here.
 */
export function requireCheckoutTarget(home: GateHome, target: string): string {
  const given = path.resolve(target);
  let parent: string;
  try {
    parent = realpathSync(path.dirname(given));
  } catch (error) {
    throw new UsageError(
      `the folder ${path.dirname(given)} for the checkout cannot be used (${(error as NodeJS.ErrnoException).code}); create it first`,
    );
  }
  const dir = path.join(parent, path.basename(given));
  const inHome = path.relative(realpathSync(home.dir), dir);
  if (inHome === "" || (!inHome.startsWith("..") && !path.isAbsolute(inHome)))
    throw new UsageError(`checkout folder ${dir} is inside the gate home ${home.dir}; give a folder outside it`);
  const uid = typeof process.geteuid === "function" ? process.geteuid() : 0;
  let stat: ReturnType<typeof lstatSync> | undefined;
  try {
    stat = lstatSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") throw new UsageError(`checkout folder ${dir} cannot be used (${code}); give a new or empty folder`);
  }
  if (stat?.isSymbolicLink()) throw new UsageError(`checkout folder ${dir} is a symbolic link; give a real, new or empty folder`);
  if (stat && !stat.isDirectory()) throw new UsageError(`checkout folder ${dir} exists and is not a folder; give a new or empty folder`);
  if (stat && stat.uid !== uid) throw new UsageError(`checkout folder ${dir} belongs to user ${stat.uid}, not to you; give a new folder`);
  if (stat && readdirSync(dir).length > 0) throw new UsageError(`checkout folder ${dir} is not empty; give a new or empty folder`);
  for (let d = parent; ; d = path.dirname(d)) {
    const p = statSync(d);
    const safe = ((p.uid === uid || p.uid === 0) && (p.mode & 0o022) === 0) || (p.mode & 0o1000) !== 0;
    if (!safe)
      throw new UsageError(
        `${d}, on the way to the checkout folder, can be changed by other users (mode ${(p.mode & 0o7777).toString(8)}, owner ${p.uid}), who could swap links into the copy while it is written; give a folder in a directory only you can write`,
      );
    if (d === path.dirname(d)) break;
  }
  return dir;
}

/**
 * Write a read-only copy of exactly the frozen bytes to `target` (see
 * `requireCheckoutTarget`): the executor works from this, not from the live
 * handoff folder. The copy is built in a private (0700) folder beside the
 * target, each file verified as it is written, made read-only, and only
 * then renamed into place, so nothing another user plants can redirect it.
 */
export function checkoutFrozenBytes(home: GateHome, files: readonly ManifestEntry[], target: string): string {
  const dir = requireCheckoutTarget(home, target);
  const staging = mkdtempSync(path.join(path.dirname(dir), ".twinlock-checkout-"));
  const dirs = new Set<string>();
  try {
    for (const f of files) {
      const bytes = readBlob(home, f);
      const out = path.join(staging, ...f.path.split("/"));
      if (!out.startsWith(staging + path.sep)) throw new IntegrityError(`frozen path ${f.path} leaves the checkout folder`);
      for (let d = path.dirname(out); d !== staging && d.startsWith(staging); d = path.dirname(d)) dirs.add(d);
      mkdirSync(path.dirname(out), { recursive: true, mode: 0o755 });
      const fd = openSync(out, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o444);
      try {
        let written = 0;
        while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    // Folders last, deepest first, so writing into them was still possible.
    for (const d of [...dirs].sort((a, b) => b.length - a.length)) chmodSync(d, 0o555);
    chmodSync(staging, 0o555);
    renameSync(staging, dir);
  } catch (error) {
    for (const d of [staging, ...dirs]) {
      try {
        chmodSync(d, 0o700);
      } catch {
        // already gone
      }
    }
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  fsyncDir(path.dirname(dir));
  return dir;
}

/**
 * Read `size` bytes of a file from its start, hashing them and counting the blocks that hold any byte but zero (what
 * the file system stores), and, given `outFd`, writing those blocks at the same offsets (a sparse copy).
 */
function readHashing(inFd: number, fileSize: number, outFd: number | undefined): { size: number; sha256: string; stored: number } {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(CHUNK);
  let size = 0;
  let stored = 0;
  while (size < fileSize) {
    const n = readSync(inFd, buffer, 0, Math.min(CHUNK, fileSize - size), size);
    if (n === 0) break;
    const chunk = buffer.subarray(0, n);
    hash.update(chunk);
    for (let at = 0; at < n; at += BLOCK) {
      const block = chunk.subarray(at, Math.min(at + BLOCK, n));
      if (block.equals(ZEROS.subarray(0, block.length))) continue;
      // Counted as the file system stores it (whole blocks); the quota judges the file once its sha256 is known.
      stored += BLOCK;
      if (outFd === undefined) continue;
      let written = 0;
      while (written < block.length) written += writeSync(outFd, block, written, block.length - written, size + at + written);
    }
    size += n;
  }
  return { size, sha256: hash.digest("hex"), stored };
}

/**
 * Copy one file, refusing anything but a regular file of its own, and return
 * the size and sha256 of the bytes copied. Exactly the size seen at opening
 * is copied: a file that grows or shrinks meanwhile is refused, so an agent
 * appending to it can neither slip bytes in nor make the copy endless.
 */
function copyHashing(
  root: string,
  rel: string,
  target: string,
  budget: number,
  home?: GateHome,
): { size: number; sha256: string; stored: number; linked: boolean } {
  const what = `handoff file ${rel}`;
  let inFd: number;
  try {
    inFd = openBeneath(root, rel, "handoff");
  } catch (error) {
    if (error instanceof RefusalError) throw error;
    // Named only when it is still where the listing saw it: a file gone since the listing may have been listed
    // through a folder swapped in for a link, and its name must not reach the agent (as the path-swap refusal says nothing).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ELOOP" || code === "ENOTDIR")
      throw new UsageError(`a file of the handoff changed while it was read (${code}); freeze again once the folder is left alone`, {
        cause: error,
      });
    throw new UsageError(`cannot read ${what} (${code}); fix it and freeze again`, { cause: error });
  }
  let outFd: number | undefined;
  try {
    const stat = fstatSync(inFd);
    if (!stat.isFile()) throw new RefusalError(`${what} is not a regular file; remove it`, { code: "BAD_HANDOFF_FILE" });
    if (stat.nlink > 1)
      throw new RefusalError(`${what} ${hardLinksProblem(stat.nlink)}`, { code: "BAD_HANDOFF_FILE", attack: "hard-link" });
    if (stat.size > budget)
      throw new RefusalError(
        `the handoff is over ${MAX_HANDOFF_BYTES} bytes at ${what}; keep bulky evidence out of the handoff and cite it by digest`,
        { code: "OVER_BUDGET" },
      );
    // Hashed first: bytes the home already holds (content-addressed, so the very bytes hashed) are linked from its
    // store, with no copy and no fsync; only new bytes are copied, hashing them again as they are written.
    const seen = readHashing(inFd, stat.size, undefined);
    if (seen.size !== stat.size || fstatSync(inFd).size !== stat.size)
      throw new RefusalError(`${what} changed size while it was frozen (${stat.size} bytes at opening); freeze again once it is written`, {
        code: "BAD_HANDOFF_FILE",
      });
    if (home !== undefined && hasBlob(home, seen.sha256)) {
      try {
        linkSync(blobPath(home, seen.sha256), target);
        return { ...seen, linked: true };
      } catch {
        // Collected meanwhile, or a file system without links here: copied instead.
      }
    }
    outFd = openSync(target, "wx", 0o600);
    const { size, sha256, stored } = readHashing(inFd, stat.size, outFd);
    if (size !== stat.size || fstatSync(inFd).size !== stat.size)
      throw new RefusalError(`${what} changed size while it was frozen (${stat.size} bytes at opening); freeze again once it is written`, {
        code: "BAD_HANDOFF_FILE",
      });
    ftruncateSync(outFd, size);
    // fsynced with the others once all are copied (copyHandoff).
    return { size, sha256, stored, linked: false };
  } finally {
    closeSync(inFd);
    if (outFd !== undefined) closeSync(outFd);
  }
}
