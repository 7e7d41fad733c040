import { realpathSync } from "node:fs";
import path from "node:path";
import { RefusalError, UsageError } from "../errors/errors.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import type { ConsumedConsent } from "../home/consumed-consents.js";
import type { GateHome } from "../home/gate-home.js";
import { isWithin } from "../input/resolve-real-path.js";
import { receiptHash } from "../run/receipt-hash.js";
import type { RunEvent, RunFile } from "../run/run-schema.js";
import type { NotificationOutbox } from "./notification-outbox.js";
import { repositoryRootOf } from "./repository-root.js";
import type { EventDraft, LoadedRun } from "./run-file.js";
import type { PendingStore, SessionStore } from "./server-state-types.js";

/** One run as a store lists it: enough for a run list without reading every run. */
export interface RunListing {
  run_id: string;
  /** The reference `read` and `update` take (the folder store: the run file's absolute path). */
  ref: string;
  revision: number;
  updated_at: string;
}

/**
 * How a freeze records a folder that lies inside the run's suite, on a store
 * whose runs are not files (a team store): `suite:` and the POSIX path from
 * the suite's root. Every reader resolves it from the suite's root where it
 * reads (the pinned suite on the gate's machine, the suite in the checkout in
 * CI), so the record names the same folder on every machine.
 */
export const SUITE_RELATIVE = "suite:";

/**
 * How a freeze on a team store records a folder outside the suite but inside
 * the checkout it was frozen from (a handoff at the repository's top while the
 * suite lies in prompts/suite): `repo:` and the POSIX path from the checkout's
 * top folder. Each reader resolves it from its own checkout's top (the
 * freezer's, CI's), or else from the checkout holding the pinned suite, never
 * from a server's working folder.
 */
export const REPO_RELATIVE = "repo:";

/** Where a recorded handoff folder is read from: beside a run file, the suite's root, and (a team store) a checkout's top. */
export interface HandoffBase {
  /** The run file's folder (folder store); undefined on a team store. */
  runFolder: string | undefined;
  suiteRoot: string;
  /** The top folder of the reader's checkout; default the checkout holding `suiteRoot`. */
  repoRoot?: string;
}

/**
 * The handoff folder a run names, as an absolute path: `suite:REL` from
 * `suiteRoot`; `repo:REL` from the reader's checkout (`repoRoot`, else the one
 * holding the suite); another relative one beside the run file (folder store),
 * else from the suite's root; an absolute one (older team-store runs) as it is.
 */
export function resolveHandoffDir(dir: string, base: HandoffBase): string {
  if (dir.startsWith(SUITE_RELATIVE)) return path.resolve(base.suiteRoot, dir.slice(SUITE_RELATIVE.length) || ".");
  if (dir.startsWith(REPO_RELATIVE)) {
    const top = base.repoRoot ?? repositoryRootOf(base.suiteRoot) ?? base.suiteRoot;
    return path.resolve(top, dir.slice(REPO_RELATIVE.length) || ".");
  }
  // A team store has no run folder: a relative record is the suite's, never the reading process's working folder.
  return path.resolve(base.runFolder ?? base.suiteRoot, dir);
}

/**
 * The form a freeze records `abs` in (see resolveHandoffDir): beside a run
 * file, relative to it (the pair moves together); on a store without run
 * files, `suite:REL` when it lies inside the suite, `repo:REL` when inside
 * the freezer's checkout (`repoRoot`); otherwise absolute.
 */
export function recordedHandoffDir(abs: string, base: HandoffBase): string {
  if (base.runFolder !== undefined) {
    const r = path.relative(base.runFolder, abs);
    const rel = r === "" ? "." : r.startsWith("..") || path.isAbsolute(r) ? undefined : r.split(path.sep).join("/");
    // A folder beside the run literally named `suite:…` (or `repo:…`) is written `./suite:…`, never read as suite-relative.
    return rel === undefined ? abs : rel.startsWith(SUITE_RELATIVE) || rel.startsWith(REPO_RELATIVE) ? `./${rel}` : rel;
  }
  // The pinned suite root is a real path: compare the folder's real path with it.
  let real = abs;
  try {
    real = realpathSync(abs);
  } catch {
    // Not there (a caller's test double): compared as given.
  }
  const inside = (root: string): string | undefined => {
    const rel = path.relative(root, real);
    return rel.startsWith("..") || path.isAbsolute(rel) ? undefined : rel === "" ? "." : rel.split(path.sep).join("/");
  };
  const inSuite = inside(base.suiteRoot);
  if (inSuite !== undefined) return `${SUITE_RELATIVE}${inSuite}`;
  const inRepo = base.repoRoot === undefined ? undefined : inside(realOrSelf(base.repoRoot));
  return inRepo === undefined ? abs : `${REPO_RELATIVE}${inRepo}`;
}

function realOrSelf(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/**
 * Where a run's recorded handoff folder is on this machine: beside the run
 * file, from the suite's root, or (`repo:`) from `repoRoot`, the reader's checkout.
 */
export function handoffPathOf(store: RunStore, ref: string, dir: string, suiteRoot: string, repoRoot?: string): string {
  return resolveHandoffDir(dir, { runFolder: store.runFolder(ref), suiteRoot, ...(repoRoot === undefined ? {} : { repoRoot }) });
}

/** Where an agent's freeze may read from: the folder's real path, and a check the freeze makes on the real path it copies from. */
export interface AgentHandoff {
  dir: string;
  /**
   * Throw unless `realRoot` — the real path the freeze resolves once and
   * copies beneath — is still allowed: a folder swapped for a link between
   * this check and the copy leads nowhere.
   */
  confine: (realRoot: string) => void;
}

/**
 * A handoff folder an agent names over the API or MCP (or, when it names
 * none, the one its run froze before), as a real path the run may use:
 * - folder store: inside the run file's folder (so a token for one run
 *   cannot freeze, and so read, another run's or the server's files);
 * - a store whose runs are not files: inside `<handoff root>/<run ID>`
 *   (`serve --handoff-root`), and once the run has frozen, exactly the real
 *   path it froze then (never re-resolved, so a link swapped in on the way
 *   is refused); with no handoff root, nothing: an agent never picks which
 *   of the server's folders is frozen and shown.
 * Throws a UsageError naming the limit.
 */
export function agentHandoffPath(
  store: RunStore,
  ref: string,
  given: string | undefined,
  run: {
    runId: string;
    /** The folder the run froze before, as recorded (resolved here from `suiteRoot` when suite-relative). */
    frozenBefore: string | undefined;
    /** The run's pinned suite root, which a suite-relative record is read from. */
    suiteRoot: string;
    handoffRoot: string | undefined;
    /** The folders of the store's other runs (folder store): a run nested in this run's folder is not this run's to freeze. */
    otherRunFolders?: readonly string[];
    /** The one folder a planner's session (`twinlock plan`'s relay) freezes: its bound handoff folder, on either store. */
    sessionHandoff?: string;
  },
): AgentHandoff {
  const folder = store.runFolder(ref);
  if (run.sessionHandoff !== undefined) {
    const own = realFolder(run.sessionHandoff, run.sessionHandoff, run.sessionHandoff);
    const named = given ?? own;
    const base = folder ?? own;
    const confine = (r: string) => {
      if (r !== own)
        throw new UsageError(
          `handoff folder ${named} is not this session's handoff folder ${own}; a planner's session freezes only the folder it was bound to`,
        );
    };
    const real = realFolder(path.resolve(base, named), named, base);
    confine(real);
    return { dir: real, confine };
  }
  const frozenBefore =
    run.frozenBefore === undefined ? undefined : resolveHandoffDir(run.frozenBefore, { runFolder: folder, suiteRoot: run.suiteRoot });
  const named = given ?? frozenBefore;
  if (named === undefined) throw new UsageError("give handoff_dir: the folder holding the handoff records (nothing was frozen before)");
  // A relative folder is taken from the run's folder: beside the run file, or the run's own folder under the handoff root.
  const base = folder ?? (run.handoffRoot !== undefined ? path.join(run.handoffRoot, run.runId) : process.cwd());
  const real = realFolder(path.resolve(base, named), named, base);
  if (folder !== undefined) {
    const limit = realpathSync(folder);
    // Another run's folder inside this one is that run's: its token, not this one, freezes (and so reads) it.
    const nested = (run.otherRunFolders ?? []).flatMap((f) => {
      const real = realOrUndefined(f);
      return real !== undefined && real !== limit && isWithin(real, limit) ? [real] : [];
    });
    const confine = (r: string) => {
      if (!isWithin(r, limit))
        throw new UsageError(
          `handoff folder ${named} is outside the run's folder ${limit}; an agent freezes only a folder beside its run file`,
        );
      const other = nested.find((n) => isWithin(r, n) || isWithin(n, r));
      if (other !== undefined)
        throw new UsageError(
          `handoff folder ${named} ${isWithin(r, other) ? "is inside" : "holds"} another run's folder (${path.relative(limit, other) || "."}); an agent freezes only its own run's handoff — move the other run out of this run's folder`,
        );
    };
    confine(real);
    return { dir: real, confine };
  }
  if (run.handoffRoot === undefined)
    throw new UsageError(
      `run ${ref} is in a team store and this server has no --handoff-root: start the server with --handoff-root DIR, and the agent freezes a folder in DIR/${run.runId}`,
    );
  const limit = path.join(realpathSync(run.handoffRoot), run.runId);
  const confine = (r: string) => {
    if (frozenBefore !== undefined && r !== frozenBefore)
      throw new UsageError(
        `handoff folder ${named} is not the folder this run froze before (${frozenBefore}); keep one handoff folder per run`,
      );
    if (!isWithin(r, limit))
      throw new UsageError(`handoff folder ${named} is not inside ${limit}, this run's folder under the server's handoff root`);
  };
  confine(real);
  return { dir: real, confine };
}

function realOrUndefined(dir: string): string | undefined {
  try {
    return realpathSync(dir);
  } catch {
    return undefined;
  }
}

function realFolder(wanted: string, named: string, base: string): string {
  try {
    return realpathSync(wanted);
  } catch {
    throw new UsageError(
      `handoff folder ${named} does not exist${path.isAbsolute(named) ? "" : ` (a relative folder is taken from ${base})`}; give the folder holding the handoff records`,
    );
  }
}

/**
 * Refuse to import a run any of whose pairs is unfinished (not closed or
 * failed). An export's chain proves only itself: cut short or with events
 * taken out and the chain rebuilt, every signed decision in it still checks,
 * yet a used consent would come back unused and a raised stop would vanish.
 * A finished run can never admit again, so nothing in it can be replayed.
 */
export function requireFinishedForImport(file: RunFile, where: string): void {
  const open = Object.values(file.state.workflows).filter((wf) => wf.state !== "closed" && wf.state !== "failed");
  if (open.length > 0)
    throw new RefusalError(
      `run ${file.state.run_id} is not finished (${open.map((wf) => `${wf.planner} is ${wf.state}`).join(", ")}): ${where} imports only runs whose every pair is closed or failed — an export cannot show that nothing was cut from its end, so an unfinished run carries on in the store it was made in`,
      { attack: "unfinished-import" },
    );
}

/** Every consent a run holds, by receipt hash: an imported run's consents are all marked used, whether or not an admission used them. */
export function consentHashesOf(file: RunFile): Array<{ hash: string; planner: string; executor: string; at: string }> {
  return Object.values(file.state.workflows).flatMap((wf) =>
    wf.consents.map((c) => ({ hash: receiptHash(c), planner: wf.planner, executor: c.executor, at: c.at })),
  );
}

/** The frozen files the freezes among these events name (every revision's). */
export function frozenFilesOf(events: readonly RunEvent[]): ManifestEntry[] {
  return events.flatMap((e) => (e.type === "handoff_frozen" ? (e.data as { files: ManifestEntry[] }).files : []));
}

/** What gate servers on one store share besides the runs: signed-in reviewers, and passkey challenges waiting for an answer. */
export interface ServerState {
  sessions: SessionStore;
  /** Decisions waiting for the reviewer's passkey. */
  decisions: PendingStore;
  /** Sign-ins waiting for a passkey. */
  signins: PendingStore;
}

/** What a decision may ask of `update`: the clock, and the revision the caller read (compare-and-swap). */
export interface UpdateOptions {
  now?: () => Date;
  expectedRevision?: number;
  /** How long to wait for the run's lock (the folder store's queue; default its own limit). */
  lockWaitMs?: number;
}

/** What `update` tells a decision besides the run (the folder store): the stops it wrote into the chain first. */
export interface DecideContext {
  /** The sequence number each pending stop request got as it was written into the chain, by request ID (`stop-requests.ts`). */
  foldedStops: ReadonlyMap<string, number>;
}

/**
 * Where runs live, whatever holds them (SPEC §10 "one interface"): the gate
 * asks only these operations. `home` is the trust root the store belongs to
 * (pins, frozen bytes, consumed consents). Every read is verified (chain,
 * replay) and set against the home's checkpoint; every write goes through
 * `update`, which serializes decisions on one run so exactly one of two
 * racing decisions lands.
 */
export interface RunStore {
  readonly home: GateHome;
  /** What the store is, for messages ("gate home /x", "postgres db"). */
  readonly label: string;
  /** Set when servers on this store share sessions and challenges (a database); else each server keeps its own in memory. */
  readonly serverState?: ServerState;
  /** A run, verified and set against its checkpoint; refuses a rolled-back, forked or unknown run. */
  read(ref: string): Promise<LoadedRun>;
  /** The run as stored, without verification: only for reports on a run that fails verification (admission, verify-log). */
  readUnverified(ref: string): Promise<RunFile>;
  /** A new run from its first events; refuses a reference already in use. */
  create(ref: string, drafts: EventDraft[], now: Date): Promise<LoadedRun>;
  /**
   * The one way to change a run: `decide` sees the current run (under the
   * store's lock or transaction) and returns new events, or throws and
   * nothing is written.
   */
  update<T>(
    ref: string,
    decide: (run: LoadedRun, context?: DecideContext) => Promise<{ events: EventDraft[]; result: T }> | { events: EventDraft[]; result: T },
    options?: UpdateOptions,
  ): Promise<{ run: LoadedRun; result: T }>;
  /**
   * Load a run made elsewhere (`twinlock export`), as it is: verified first
   * (chain, replay), with each frozen file `frozen` gives checked against its
   * sha256 and kept; a run the store already holds is refused, never replaced.
   */
  importRun(ref: string, file: RunFile, frozen: (entry: ManifestEntry) => Buffer): Promise<LoadedRun>;
  /** The record that a consent was used by an admission (of any copy of its run), if it was: a consent is used once. */
  findConsumedConsent(consentHash: string): Promise<ConsumedConsent | undefined>;
  /** The reference of the run with this ID, without listing every run; undefined when the store holds none. */
  resolve(runId: string): Promise<string | undefined>;
  /**
   * The folder a run's relative handoff paths are taken from (the run
   * file's folder); undefined for a store whose runs are not files, where
   * handoff folders are recorded as absolute paths.
   */
  runFolder(ref: string): string | undefined;
  /** Resolve when the store can serve (reachable, at this build's schema); throw, saying why, when not. */
  ready(): Promise<void>;
  /** Let go of what the store holds open (a connection pool); the store is not used after. */
  close(): Promise<void>;
  /** Every run this store holds, newest first. */
  list(): Promise<RunListing[]>;
  /** The webhooks and the durable outbox of their notifications (`twinlock notify`, delivered by `serve`). */
  readonly notifications: NotificationOutbox;
}
