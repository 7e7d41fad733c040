import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openGateHome } from "../../home/gate-home.js";
import { outboxContract } from "../../test-support/outbox-contract.js";
import { freshPostgresDatabase, TEST_POSTGRES } from "../../test-support/postgres-database.js";
import { runStoreContract } from "../../test-support/run-store-contract.js";
import { migratePostgres, postgresRunStore, redact, requireCurrentSchema } from "./postgres-run-store.js";

const URL_BASE = TEST_POSTGRES;
const freshDatabase = () => freshPostgresDatabase();

describe.skipIf(!URL_BASE)("the PostgreSQL store", () => {
  runStoreContract("PostgreSQL 15", async () => {
    const db = await freshDatabase();
    await migratePostgres(db.url);
    const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-pg-home-"));
    const home = openGateHome(path.join(dir, "home"), { create: true });
    const store = postgresRunStore(db.url, home);
    return {
      store,
      newRef: (() => {
        let n = 0;
        return () => `contract/run-${n++}`;
      })(),
      dispose: async () => {
        await store.close();
        await db.drop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });

  outboxContract("PostgreSQL 15", async () => {
    const db = await freshDatabase();
    await migratePostgres(db.url);
    const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-pg-outbox-"));
    const home = openGateHome(path.join(dir, "home"), { create: true });
    const store = postgresRunStore(db.url, home);
    let n = 0;
    return {
      store,
      newRef: () => `contract/run-${n++}`,
      reopen: () => postgresRunStore(db.url, home),
      shared: true,
      dispose: async () => {
        await store.close();
        await db.drop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });

  it("migrates once, idempotently, and refuses a database newer than it knows", async () => {
    const db = await freshDatabase();
    try {
      expect(await migratePostgres(db.url)).toEqual({ from: 0, to: 7 });
      expect(await migratePostgres(db.url)).toEqual({ from: 7, to: 7 });
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      await c.query("INSERT INTO twinlock_schema (version, name) VALUES (99, 'from the future')");
      await c.end();
      await expect(migratePostgres(db.url)).rejects.toThrow(/newer than this twinlock knows/);
      const pool = new pg.Pool({ connectionString: db.url });
      await expect(requireCurrentSchema(pool, db.url)).rejects.toThrow(/upgrade twinlock/);
      await pool.end();
    } finally {
      await db.drop();
    }
  });

  it("keeps events append-only in the database itself", async () => {
    const db = await freshDatabase();
    try {
      await migratePostgres(db.url);
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      await expect(c.query("UPDATE twinlock_events SET event = '{}'")).resolves.toBeTruthy(); // no rows yet: nothing to refuse
      await c.query(
        "INSERT INTO twinlock_runs (run_id, home_id, revision, head, state, created_at, updated_at) VALUES ('run_0000000000000000', 'home_0000000000000000', 1, 'h', '{}', now(), now())",
      );
      await c.query("INSERT INTO twinlock_events (run_id, seq, hash, event) VALUES ('run_0000000000000000', 1, 'h', '{}')");
      await expect(c.query("UPDATE twinlock_events SET event = '{\"x\":1}'")).rejects.toThrow(/append-only/);
      await expect(c.query("DELETE FROM twinlock_events")).rejects.toThrow(/append-only/);
      await c.end();
    } finally {
      await db.drop();
    }
  });

  it("never shows the password of a connection string", () => {
    expect(redact("postgres://gate:s3cret@db.example:5432/twinlock")).not.toContain("s3cret");
  });
});

describe("a server's copy of a team store's trust files", () => {
  it("is a folder of its own for everything that selects the data (database, user, options), and the same whatever the password", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-pg-copy-"));
    try {
      const home = openGateHome(path.join(dir, "home"), { create: true });
      const copyOf = (url: string) => {
        const store = postgresRunStore(url, home);
        void store.close();
        return store.home.dir;
      };
      const base = "postgres://gate:one@db.example:5432/twinlock";
      const copies = [
        base,
        "postgres://gate:one@db.example:5432/other",
        "postgres://auditor:one@db.example:5432/twinlock",
        `${base}?options=-c%20search_path%3Dteam2`,
        "postgres://gate:one@db.example:5433/twinlock",
      ].map(copyOf);
      expect(new Set(copies).size).toBe(copies.length);
      for (const c of copies) expect(path.dirname(c)).toBe(path.join(home.dir, "stores"));
      expect(copyOf("postgres://gate:two@db.example:5432/twinlock")).toBe(copies[0]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
