import { createHash } from "node:crypto";
import path from "node:path";

/** The binding file format this version writes and reads. */
export const BINDING_FORMAT = "twinlock-binding/1";

/** One approved file of the checkout, as the frozen manifest lists it. */
export interface BoundFile {
  path: string;
  sha256: string;
  size: number;
}

/**
 * A session binding (`twinlock exec`): the gate home's record that one
 * admitted executor is at work, and on exactly what. The hook allows a write,
 * shell or MCP call only through a binding, and only while everything it
 * records still holds: the run's checkpoint head, the checkout's bytes, the
 * consent's expiry, the exec process and its secret.
 */
export interface SessionBinding {
  format: typeof BINDING_FORMAT;
  run_id: string;
  /** The run file's real path. */
  run_file: string;
  executor: string;
  planner: string;
  handoff_hash: string;
  revision: number;
  /** The admitted +ACTION IDs. */
  actions: string[];
  /** Real paths of the admitted actions' targets: file-path tools may write there. */
  targets: string[];
  /** The folder exec was started in: shell calls must run inside it or the checkout. */
  project_dir: string;
  /** Real path of the read-only checkout of the approved bytes. */
  checkout_dir: string;
  /** The approved files the checkout must hold, and nothing else. */
  manifest: BoundFile[];
  consent_expires_at: string | null;
  /** The run's checkpoint in the home when the session was bound: any later write of the run ends the binding. */
  checkpoint: { seq: number; head: string };
  /** The exec process: the agent runs below it. */
  pid: number;
  /** sha256 of the session secret exec gives its child (TWINLOCK_SESSION). */
  secret_sha256: string;
  created_at: string;
}

/** The binding file of an executor's session on a run: a digest of both, so an agent cannot pick the file name. */
export function bindingFile(homeDir: string, runFile: string, executor: string): string {
  const key = createHash("sha256").update(`${runFile}\u0000${executor}`).digest("hex").slice(0, 32);
  return path.join(homeDir, "bindings", `${key}.json`);
}

/** sha256 of a session secret, as a binding records it. */
export function secretDigest(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

const HASH = /^sha256:[0-9a-f]{64}$/;

/** A binding read from its file, or a reason it cannot be trusted. Checked by hand, without the schema library: the hook reads it on every call. */
export function parseSessionBinding(text: string): SessionBinding | { problem: string } {
  let b: Record<string, unknown>;
  try {
    b = JSON.parse(text);
  } catch {
    return { problem: "the binding file is not JSON" };
  }
  const str = (k: string) => typeof b[k] === "string" && (b[k] as string).length > 0;
  const strs = (k: string) => Array.isArray(b[k]) && (b[k] as unknown[]).every((v) => typeof v === "string");
  const cp = b.checkpoint as Record<string, unknown> | undefined;
  const manifest = b.manifest;
  const ok =
    b !== null &&
    typeof b === "object" &&
    b.format === BINDING_FORMAT &&
    ["run_id", "run_file", "executor", "planner", "project_dir", "checkout_dir", "secret_sha256", "created_at"].every(str) &&
    typeof b.handoff_hash === "string" &&
    HASH.test(b.handoff_hash) &&
    Number.isInteger(b.revision) &&
    strs("actions") &&
    strs("targets") &&
    (b.consent_expires_at === null || str("consent_expires_at")) &&
    typeof cp === "object" &&
    cp !== null &&
    Number.isInteger(cp.seq) &&
    typeof cp.head === "string" &&
    Number.isInteger(b.pid) &&
    Array.isArray(manifest) &&
    manifest.every(
      (f) =>
        typeof f === "object" &&
        f !== null &&
        typeof f.path === "string" &&
        /^[0-9a-f]{64}$/.test(f.sha256) &&
        Number.isInteger(f.size) &&
        f.size >= 0,
    );
  return ok ? (b as unknown as SessionBinding) : { problem: "the binding file is not a twinlock binding" };
}
