import { UsageError } from "../errors/errors.js";
import { folderRunStore } from "../home/folder-run-store.js";
import { type GateHome, openGateHome } from "../home/gate-home.js";
import { postgresRunStore } from "../store/postgres/postgres-run-store.js";
import type { RunStore } from "../store/run-store.js";

/** The gate home from `--home DIR`, else TWINLOCK_HOME, else the XDG state folder; created only where a person sets it up (`trust pin`). */
export function homeOption(o: { home?: string }, options: { create?: boolean } = {}): GateHome {
  return openGateHome(o.home, { create: options.create ?? false });
}

/**
 * The run store: `--store postgres://…` (or TWINLOCK_STORE) for a team's
 * PostgreSQL database, else the gate home's embedded folder store (runs are
 * run files, named by path). The gate home is used either way for the pins,
 * the frozen bytes and the reviewers.
 */
export function storeOption(o: { home?: string; store?: string }): RunStore {
  const url = storeUrl(o);
  if (url === undefined) return folderRunStore(homeOption(o));
  // The value is not repeated: a mistyped URL may still hold the database's password.
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new UsageError(
      `${o.store === undefined ? "TWINLOCK_STORE" : "--store"} is not a store URL (it does not start with postgres:// or postgresql://); give postgres://USER@HOST:PORT/DB, or leave it out for the gate home's folder store`,
    );
  // A server's (or a person's) home holds its copy of the team's trust files: made when first needed.
  return postgresRunStore(url, homeOption(o, { create: true }), { max: poolSize(process.env.TWINLOCK_STORE_POOL) });
}

/** TWINLOCK_STORE_POOL: the most connections one process opens to the team database (default 10). */
function poolSize(text: string | undefined): number {
  if (text === undefined || text === "") return 10;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 200)
    throw new UsageError(
      `TWINLOCK_STORE_POOL=${JSON.stringify(text.slice(0, 20))} is not a connection count; give a whole number from 1 to 200`,
    );
  return n;
}

/** The team store's URL (`--store`, else TWINLOCK_STORE), or undefined for the gate home's folder store. */
export function storeUrl(o: { store?: string }): string | undefined {
  return o.store ?? (process.env.TWINLOCK_STORE || undefined);
}

/**
 * The gate home whose trust files (pins, reviewers, agent tokens) a command
 * reads or changes: with `--store` (or TWINLOCK_STORE), the team database's,
 * brought up to date first; else the folder home (`homeOption`).
 */
export async function trustHomeOption(o: { home?: string; store?: string }, options: { create?: boolean } = {}): Promise<GateHome> {
  if (storeUrl(o) === undefined) return homeOption(o, options);
  const store = storeOption(o);
  await store.ready();
  await store.home.shared?.refresh();
  return store.home;
}

/** Whether the command names a team store (then its home is `trustHomeOption`'s). */
export function usesTeamStore(o: { store?: string }): boolean {
  return storeUrl(o) !== undefined;
}
