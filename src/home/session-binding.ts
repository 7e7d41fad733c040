import { createHash } from "node:crypto";
import path from "node:path";

/** The binding file format this version writes and reads (2: a planner's sessions, team-store runs, exec's start time, the lease). */
export const BINDING_FORMAT = "twinlock-binding/2";

/** Whose session a binding is: an admitted executor's (`twinlock exec`) or a planner's (`twinlock plan`). */
export type SessionKind = "executor" | "planner";

/**
 * How long a binding holds after the process that bound it last renewed it
 * (the binding file's modification time). `exec` and `plan` renew it every
 * RENEW_MS while they run and their run is unchanged: a binding left by a
 * process that died without unbinding (SIGKILL) runs out, on every system.
 */
export const LEASE_MS = 30_000;
/** How often `exec` and `plan` re-check their run and renew the binding's lease. */
export const RENEW_MS = 5_000;

/** One approved file of the checkout, as the frozen manifest lists it. */
export interface BoundFile {
  path: string;
  sha256: string;
  size: number;
}

/** The process that bound a session, as the hook re-checks it: its PID, and its start time so a reused PID is not it. */
export interface BindingProcess {
  pid: number;
  /** Linux: field 22 of /proc/PID/stat (clock ticks after boot); null where there is no /proc. */
  start: string | null;
  /** Linux: /proc/sys/kernel/random/boot_id, so a start time of an earlier boot is not this one; null elsewhere. */
  boot_id: string | null;
}

/**
 * A session binding: the gate home's record that one agent session is at
 * work, and on exactly what. The hook allows a write, shell or MCP call
 * only through a binding, and only while everything it records still
 * holds: the process that bound it (and its start time), its secret, its
 * lease, and for an executor the run's checkpoint head (folder store), the
 * checkout's bytes and the consent's expiry.
 */
export interface SessionBinding {
  format: typeof BINDING_FORMAT;
  kind: SessionKind;
  run_id: string;
  /**
   * The session's run as the environment names it (TWINLOCK_RUN): the run
   * file's real path (folder store), or the run ID (a team store, whose runs
   * are not files).
   */
  run_file: string;
  /** `folder` (a run file, checked against its checkpoint in the home) or `team` (PostgreSQL: exec's re-checks keep it live). */
  store: "folder" | "team";
  executor: string;
  planner: string;
  /** Executor: the approved hash; planner: the hash frozen when the session began, or null. */
  handoff_hash: string | null;
  revision: number;
  /** The admitted +ACTION IDs (executor; empty for a planner). */
  actions: string[];
  /** Real paths of the admitted actions' targets: file-path tools may write there (executor; empty for a planner). */
  targets: string[];
  /** The folder the session was started in: shell calls must run inside it, the checkout or the handoff folder. */
  project_dir: string;
  /** Executor: real path of the read-only checkout of the approved bytes; null for a planner. */
  checkout_dir: string | null;
  /** Planner: real path of its handoff folder, the only place it may write; null for an executor. */
  handoff_dir: string | null;
  /** The approved files the checkout must hold, and nothing else (executor). */
  manifest: BoundFile[];
  consent_expires_at: string | null;
  /** Folder-store executor: the run's checkpoint when bound (any later write of the run ends the session); else null. */
  checkpoint: { seq: number; head: string } | null;
  /** The process that bound the session (`exec` or `plan`): the agent runs below it. */
  process: BindingProcess;
  /** sha256 of the session secret the binding process gives its child (TWINLOCK_SESSION). */
  secret_sha256: string;
  created_at: string;
}

/** The session key of a run as TWINLOCK_RUN names it: a run ID as it is, a run file by its real path (resolved by the caller). */
export const RUN_ID_PATTERN = /^run_[0-9a-f]{16}$/;

/** The binding file of a session: a digest of the run, the kind and the prompt ID, so an agent cannot pick the file name. */
export function bindingFile(homeDir: string, runKey: string, kind: SessionKind, id: string): string {
  const key = createHash("sha256").update(`${runKey}\u0000${kind}\u0000${id}`).digest("hex").slice(0, 32);
  return path.join(homeDir, "bindings", `${key}.json`);
}

/**
 * The note a stop leaves where it removed a session's binding (`KEY.ended`):
 * why and when the session was ended, so the next call's deny says so rather
 * than only that no session is bound. Binding the prompt again removes it.
 */
export function bindingEndedFile(bindingFilePath: string): string {
  return bindingFilePath.replace(/\.json$/, ".ended");
}

/** sha256 of a session secret, as a binding records it. */
export function secretDigest(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

const HASH = /^sha256:[0-9a-f]{64}$/;
const HEX64 = /^[0-9a-f]{64}$/;

/** A binding read from its file, or a reason it cannot be trusted. Checked by hand, without the schema library: the hook reads it on every call. */
export function parseSessionBinding(text: string): SessionBinding | { problem: string } {
  let b: Record<string, unknown>;
  try {
    b = JSON.parse(text);
  } catch {
    return { problem: "the binding file is not JSON" };
  }
  if (b === null || typeof b !== "object" || Array.isArray(b)) return { problem: "the binding file is not a twinlock binding" };
  const str = (k: string) => typeof b[k] === "string" && (b[k] as string).length > 0;
  const strOrNull = (k: string) => b[k] === null || str(k);
  const strs = (k: string) => Array.isArray(b[k]) && (b[k] as unknown[]).every((v) => typeof v === "string");
  const cp = b.checkpoint as Record<string, unknown> | null | undefined;
  const proc = b.process as Record<string, unknown> | undefined;
  const manifest = b.manifest;
  const ok =
    b.format === BINDING_FORMAT &&
    (b.kind === "executor" || b.kind === "planner") &&
    (b.store === "folder" || b.store === "team") &&
    ["run_id", "run_file", "executor", "planner", "project_dir", "secret_sha256", "created_at"].every(str) &&
    (b.handoff_hash === null || (typeof b.handoff_hash === "string" && HASH.test(b.handoff_hash))) &&
    Number.isInteger(b.revision) &&
    strs("actions") &&
    strs("targets") &&
    strOrNull("checkout_dir") &&
    strOrNull("handoff_dir") &&
    strOrNull("consent_expires_at") &&
    (cp === null || (typeof cp === "object" && cp !== undefined && Number.isInteger(cp.seq) && typeof cp.head === "string")) &&
    typeof proc === "object" &&
    proc !== null &&
    Number.isInteger(proc.pid) &&
    (proc.start === null || (typeof proc.start === "string" && /^[0-9]{1,20}$/.test(proc.start))) &&
    (proc.boot_id === null || (typeof proc.boot_id === "string" && proc.boot_id.length > 0)) &&
    typeof b.secret_sha256 === "string" &&
    HEX64.test(b.secret_sha256) &&
    Array.isArray(manifest) &&
    manifest.every(
      (f) =>
        typeof f === "object" &&
        f !== null &&
        typeof f.path === "string" &&
        HEX64.test(f.sha256) &&
        Number.isInteger(f.size) &&
        f.size >= 0,
    );
  if (!ok) return { problem: "the binding file is not a twinlock binding" };
  // Each kind names the one place it may write: an executor its checkout, a planner its handoff folder.
  if (b.kind === "executor" && (b.checkout_dir === null || b.handoff_hash === null))
    return { problem: "the executor's binding names no checkout" };
  if (b.kind === "planner" && (b.handoff_dir === null || (b.targets as string[]).length > 0 || b.checkout_dir !== null))
    return { problem: "the planner's binding is not a planner's" };
  return b as unknown as SessionBinding;
}
