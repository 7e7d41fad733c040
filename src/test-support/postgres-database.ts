import { randomBytes } from "node:crypto";
import pg from "pg";

/** A real PostgreSQL 15 for the store tests (`.ci/run` starts a throwaway cluster and sets TWINLOCK_TEST_POSTGRES). */
export const TEST_POSTGRES = process.env.TWINLOCK_TEST_POSTGRES;

/** A new, empty database on the test cluster (so tests never share rows), and how to drop it. */
export async function freshPostgresDatabase(prefix = "twinlock_test"): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!TEST_POSTGRES) throw new Error("TWINLOCK_TEST_POSTGRES is not set");
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  await asAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  const u = new URL(TEST_POSTGRES);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => asAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) };
}

async function asAdmin(work: (c: pg.Client) => Promise<unknown>): Promise<void> {
  const admin = new pg.Client({ connectionString: TEST_POSTGRES });
  await admin.connect();
  try {
    await work(admin);
  } finally {
    await admin.end();
  }
}
