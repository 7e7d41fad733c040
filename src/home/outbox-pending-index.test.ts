import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { NOTIFICATION_KIND_NAMES } from "../notify/notification-kinds.js";
import { newWebhookId, newWebhookSecret } from "../notify/webhook.js";
import { GAVE_UP, type OutboxEntry } from "../store/notification-outbox.js";
import type { EventDraft } from "../store/run-file.js";
import { bundleForChild } from "../test-support/child-module.js";
import { killChildren } from "../test-support/kill-children.js";
import { makeTempDir, removeTempDirs } from "../test-support/temp-suite.js";
import { folderRunStore } from "./folder-run-store.js";
import { openGateHome } from "./gate-home.js";

const children: ChildProcess[] = [];
afterEach(() => killChildren(children));
afterAll(removeTempDirs);

let writer = "";
beforeAll(async () => {
  writer = await bundleForChild(fileURLToPath(new URL("../test-support/outbox-crash-writer.ts", import.meta.url)), makeTempDir());
}, 60_000);

/** Every run whose outbox file (read directly, not through the index) holds a delivery still to try. */
function runsWithPending(homeDir: string): string[] {
  const dir = path.join(homeDir, "notify", "outbox");
  return readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .filter((n) =>
      (JSON.parse(readFileSync(path.join(dir, n), "utf8")) as { entries: OutboxEntry[] }).entries.some(
        (e) => e.next_attempt_ms !== GAVE_UP,
      ),
    )
    .map((n) => n.slice(0, -5))
    .sort();
}

const created = (store: { home: { id: string } }): EventDraft => ({
  type: "run_created",
  actor: "test",
  data: {
    run_id: `run_${randomBytes(8).toString("hex")}`,
    home_id: store.home.id,
    suite: { root: "/test/suite", suite_id: "test-suite" },
    settings: { mode: "DRAFT_ONLY", environment: "default", actions: "all", budget: null },
    workflows: [{ planner: "MD-29", executor: "MD-30", executor_title: "Executor", pair_digest: `sha256:${"0".repeat(64)}` }],
  },
});
const stop = (reason: string): EventDraft => ({ type: "stop_raised", actor: "test", data: { reason, workflow: null, note: null } });

const marks = (homeDir: string) =>
  readdirSync(path.join(homeDir, "notify", "pending"))
    .filter((n) => n.startsWith("run_"))
    .sort();

describe("the gate home outbox's pending index", () => {
  it("marks every run with a delivery to try after a writer is killed just before or after any outbox write, and due offers exactly those runs", async () => {
    const root = makeTempDir();
    const home = openGateHome(path.join(root, "home"), { create: true });
    const runs = path.join(root, "runs");
    mkdirSync(runs);
    const setup = folderRunStore(home);
    await setup.notifications.addWebhook({
      id: newWebhookId(),
      url: "http://127.0.0.1:9/hook",
      events: [...NOTIFICATION_KIND_NAMES],
      format: "json",
      secret: newWebhookSecret(),
      created_at: "2000-01-01T00:00:00.000Z",
    });
    // A round writes a run's outbox four times (created, stops enqueued, one given up on, the rest removed): every
    // moment just before and just after each of those writes, twice over.
    for (const killAt of [1, 2, 3, 4, 5, 6, 7, 8].flatMap((k) => [`before:${k}`, `after:${k}`])) {
      const child = spawn(process.execPath, [writer, home.dir, runs, killAt], { stdio: ["ignore", "pipe", "inherit"] });
      children.push(child);
      const exited = new Promise<NodeJS.Signals | null>((r) => child.once("exit", (_code, signal) => r(signal)));
      expect(await exited).toBe("SIGKILL");
      // The invariant: no run with a delivery to try is unmarked (a mark over nothing may be left, and is cleared).
      const pending = runsWithPending(home.dir);
      expect(pending.filter((runId) => !marks(home.dir).includes(runId))).toEqual([]);
      const after = folderRunStore(openGateHome(home.dir));
      const due = await after.notifications.due(Date.now() + 1e12, 10_000);
      expect([...new Set(due.map((e) => e.run_id))].sort()).toEqual(pending);
      // The look removed the marks over nothing: what is left is what waits.
      expect(marks(home.dir)).toEqual(pending);
      await after.close();
    }
    expect(runsWithPending(home.dir).length).toBeGreaterThan(0);
  }, 120_000);

  it("is built from every run's outbox the first time a home from before it is looked at", async () => {
    const root = makeTempDir();
    const home = openGateHome(path.join(root, "home"), { create: true });
    const runs = path.join(root, "runs");
    mkdirSync(runs);
    const store = folderRunStore(home);
    await store.notifications.addWebhook({
      id: newWebhookId(),
      url: "http://127.0.0.1:9/hook",
      events: [...NOTIFICATION_KIND_NAMES],
      format: "json",
      secret: newWebhookSecret(),
      created_at: "2000-01-01T00:00:00.000Z",
    });
    const child = spawn(process.execPath, [writer, home.dir, runs], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(child);
    await new Promise<void>((resolve) => child.stdout?.on("data", (c: Buffer) => c.toString().includes("ready") && resolve()));
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    // A home whose outbox predates the index: no index at all.
    const { rmSync } = await import("node:fs");
    rmSync(path.join(home.dir, "notify", "pending"), { recursive: true, force: true });
    const pending = runsWithPending(home.dir);
    expect(pending.length).toBeGreaterThan(0);
    const after = folderRunStore(openGateHome(home.dir));
    expect([...new Set((await after.notifications.due(Date.now() + 1e12, 10_000)).map((e) => e.run_id))].sort()).toEqual(pending);
    expect(marks(home.dir)).toEqual(pending);
    await after.close();
  }, 60_000);

  it("reads only the runs with something waiting: a run whose deliveries all went is never opened again by due", async () => {
    const root = makeTempDir();
    const home = openGateHome(path.join(root, "home"), { create: true });
    const store = folderRunStore(home);
    await store.notifications.addWebhook({
      id: newWebhookId(),
      url: "http://127.0.0.1:9/hook",
      events: [...NOTIFICATION_KIND_NAMES],
      format: "json",
      secret: newWebhookSecret(),
      created_at: "2000-01-01T00:00:00.000Z",
    });
    const refs = ["old", "waits"].map((n) => path.join(root, `${n}.json`));
    for (const ref of refs) {
      await store.create(ref, [created(store)], new Date());
      await store.update(ref, () => ({ events: [stop("a")], result: undefined }));
    }
    const old = (await store.read(refs[0] as string)).state.run_id;
    for (const e of await store.notifications.due(Date.now(), 10)) if (e.run_id === old) await store.notifications.delivered(e);
    await store.notifications.flush();
    // Its outbox file made unreadable: a due that opened it would note it.
    writeFileSync(path.join(home.dir, "notify", "outbox", `${old}.json`), "{ not json");
    const notes: unknown[] = [];
    const due = await store.notifications.due(Date.now(), 10, (n) => notes.push(n));
    expect(due.map((e) => e.run_id)).toEqual([(await store.read(refs[1] as string)).state.run_id]);
    expect(notes).toEqual([]);
    await store.close();
  });
});
