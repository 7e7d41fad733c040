import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { addWebhook } from "../../src/gate/configure-webhooks.js";
import { folderRunStore } from "../../src/home/folder-run-store.js";
import { openGateHome } from "../../src/home/gate-home.js";
import { updateRun } from "../../src/home/run-ledger.js";
import { migratePostgres, postgresRunStore } from "../../src/store/postgres/postgres-run-store.js";
import type { EventDraft, LoadedRun } from "../../src/store/run-file.js";
import type { RunStore } from "../../src/store/run-store.js";
import { freshPostgresDatabase, TEST_POSTGRES } from "../../src/test-support/postgres-database.js";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../../src/test-support/webhook-receiver.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

/**
 * The outbox through a server killed mid-delivery (issue 27), on both
 * stores: the real `twinlock serve` delivers a gate home's (or a PostgreSQL
 * database's) notifications, is killed with SIGKILL while a receiver holds
 * one delivery unanswered, more decisions are recorded while it is down (on
 * the folder store some straight to the run ledger, as a crash between a
 * decision and its enqueue would leave them), and a second server
 * delivers everything: every notification at least once under one ID, each
 * once after de-duplication, in each run's order, every signature valid.
 */
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function created(store: RunStore): EventDraft {
  return {
    type: "run_created",
    actor: "restart",
    data: {
      run_id: `run_${randomBytes(8).toString("hex")}`,
      home_id: store.home.id,
      suite: { root: "/restart/suite", suite_id: "restart-suite" },
      settings: { mode: "DRAFT_ONLY", environment: "default", actions: "all", budget: null },
      workflows: [{ planner: "MD-29", executor: "MD-30", executor_title: "Restart executor", pair_digest: `sha256:${"0".repeat(64)}` }],
    },
  };
}
const stop = (reason: string): EventDraft => ({ type: "stop_raised", actor: "restart", data: { reason, workflow: null, note: null } });

function serve(home: string, storeUrl?: string): { child: ChildProcess; listening: Promise<void> } {
  const store = storeUrl === undefined ? [] : ["--store", storeUrl];
  const child = spawn(process.execPath, [DIST_BIN, "serve", "--home", home, ...store, "--listen", "127.0.0.1:0", "--quiet"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let out = "";
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("listening on")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`serve exited (${code}) before listening: ${out}`)));
  });
  return { child, listening };
}

/** The store a case runs on: the gate home's folders, or a fresh PostgreSQL database (its URL given to both servers). */
interface StoreUnderTest {
  store: RunStore;
  url?: string;
  /** Run references: run files for the folder store, names in the database for PostgreSQL. */
  refs: string[];
  /** Record without the outbox (a crash between a decision and its enqueue); undefined where they are one transaction. */
  ledgerOnly?: (ref: string, decide: () => { events: EventDraft[]; result: undefined }) => Promise<{ run: LoadedRun }>;
}

async function folderStore(dir: string): Promise<StoreUnderTest> {
  const home = openGateHome(path.join(dir, "home"), { create: true });
  return {
    store: folderRunStore(home),
    refs: [path.join(dir, "a.json"), path.join(dir, "b.json")],
    ledgerOnly: (ref, decide) => updateRun(ref, home, decide),
  };
}

async function postgresStore(dir: string): Promise<StoreUnderTest> {
  const db = await freshPostgresDatabase("twinlock_notify_restart");
  cleanups.push(db.drop);
  await migratePostgres(db.url);
  const store = postgresRunStore(db.url, openGateHome(path.join(dir, "home"), { create: true }));
  cleanups.push(() => store.close());
  return { store, url: db.url, refs: ["restart/a", "restart/b"] };
}

describe.each([
  { name: "the gate home's folder store", open: folderStore, skip: false },
  { name: "PostgreSQL", open: postgresStore, skip: !TEST_POSTGRES },
])("notifications through a server restart: $name", ({ open, skip }) => {
  it.skipIf(skip)(
    "delivers every event once per ID, in each run's order, after the server is killed mid-delivery and started again",
    async () => {
      await ensureBuilt();
      const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-notify-restart-"));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const { store, url, refs: runs, ledgerOnly } = await open(dir);
      const home = store.home;
      let held = false;
      const r: WebhookReceiver = await startWebhookReceiver("", (n, _req, res) => {
        // The third delivery is never answered: the server is killed while it waits.
        if (n === 3) held = true;
        else res.writeHead(204).end();
      });
      cleanups.push(() => r.close());
      r.secret = (await addWebhook(store, { url: r.url, events: "stop.raised" })).secret;

      const expected = new Map<string, string[]>();
      const record = async (ref: string, reasons: string[], viaLedgerOnly = false) => {
        // PostgreSQL puts a decision and its notifications in one transaction: there is no crash between them to stage.
        const write =
          viaLedgerOnly && ledgerOnly
            ? (d: () => { events: EventDraft[]; result: undefined }) => ledgerOnly(ref, d)
            : (d: () => { events: EventDraft[]; result: undefined }) => store.update(ref, d);
        const { run } = await write(() => ({ events: reasons.map(stop), result: undefined }));
        expected.set(run.state.run_id, [...(expected.get(run.state.run_id) ?? []), ...reasons.map((x) => `!STOP:${x}`)]);
      };
      for (const ref of runs) await store.create(ref, [created(store)], new Date());
      for (const ref of runs) await record(ref, ["one", "two", "three"]);

      const first = serve(home.dir, url);
      await first.listening;
      await eventually(() => held, "the held delivery");
      first.child.kill("SIGKILL");
      await new Promise((resolve) => first.child.once("exit", resolve));
      const heldId = r.deliveries[2]?.id as string;

      // While no server runs: decisions as usual, and some whose enqueue a crash lost (written past the outbox).
      await record(runs[0] as string, ["four"]);
      await record(runs[1] as string, ["four", "five"], true);
      await record(runs[0] as string, ["five"], true);

      const second = serve(home.dir, url);
      await second.listening;
      const total = [...expected.values()].flat().length;
      await eventually(() => r.unique().length === total, `all ${total} notifications delivered`, 60_000);
      await eventually(async () => (await store.notifications.backlog()).length === 0, "the outbox emptied");
      second.child.kill("SIGTERM");
      await new Promise((resolve) => second.child.once("exit", resolve));

      expect(r.deliveries.filter((d) => !d.verified)).toEqual([]);
      // The held delivery came again under its ID after the restart: at least once, de-duplicated by ID.
      expect(r.deliveries.filter((d) => d.id === heldId).length).toBeGreaterThanOrEqual(2);
      const byRun = new Map<string, string[]>();
      for (const d of r.unique()) {
        const data = d.body.data as { run_id: string; detail: string };
        byRun.set(data.run_id, [...(byRun.get(data.run_id) ?? []), data.detail]);
      }
      expect(byRun).toEqual(expected);
    },
    180_000,
  );
});
