import { UsageError } from "../../errors/errors.js";
import { migratePostgres, redact } from "../../store/postgres/postgres-run-store.js";
import type { CommandResult, CommonOptions } from "../command-result.js";

/** `twinlock db migrate --store postgres://…`: apply this build's schema migrations (never past a newer schema). */
export async function runDbMigrate(o: CommonOptions & { store?: string }): Promise<CommandResult> {
  const url = o.store ?? (process.env.TWINLOCK_STORE || undefined);
  if (!url || !/^postgres(ql)?:\/\//.test(url))
    throw new UsageError("db migrate needs --store postgres://USER@HOST:PORT/DB (or TWINLOCK_STORE)");
  const { from, to } = await migratePostgres(url);
  const text =
    from === to ? `${redact(url)}: schema already at version ${to}` : `${redact(url)}: migrated the schema from version ${from} to ${to}`;
  return { exitCode: 0, text, json: { ok: true, from, to } };
}
