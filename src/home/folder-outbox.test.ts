import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { NOTIFICATION_KIND_NAMES } from "../notify/notification-kinds.js";
import { newWebhookId, newWebhookSecret } from "../notify/webhook.js";
import type { EventDraft } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";
import { folderRunStore } from "./folder-run-store.js";
import { openGateHome } from "./gate-home.js";

const AT = new Date("2030-01-01T00:00:00.000Z");

function created(store: RunStore, runId: string): EventDraft {
  return {
    type: "run_created",
    actor: "test",
    data: {
      run_id: runId,
      home_id: store.home.id,
      suite: { root: "/test/suite", suite_id: "test-suite" },
      settings: { mode: "DRAFT_ONLY", environment: "default", actions: "all", budget: null },
      workflows: [{ planner: "MD-29", executor: "MD-30", executor_title: "Executor", pair_digest: `sha256:${"0".repeat(64)}` }],
    },
  };
}

function webhook() {
  return {
    id: newWebhookId(),
    url: "http://127.0.0.1:9/hook",
    events: [...NOTIFICATION_KIND_NAMES],
    format: "json" as const,
    secret: newWebhookSecret(),
    created_at: "2029-01-01T00:00:00.000Z",
  };
}

const stopDraft = (reason: string): EventDraft => ({ type: "stop_raised", actor: "test", data: { reason, workflow: null, note: null } });

describe("the gate home's outbox", () => {
  it("skips a run whose outbox file cannot be read, with a note, and offers and removes every other run's notifications", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-folder-outbox-"));
    try {
      const home = openGateHome(path.join(dir, "home"), { create: true });
      const store = folderRunStore(home);
      await store.notifications.addWebhook({
        id: newWebhookId(),
        url: "http://127.0.0.1:9/hook",
        events: [...NOTIFICATION_KIND_NAMES],
        format: "json",
        secret: newWebhookSecret(),
        created_at: "2029-01-01T00:00:00.000Z",
      });
      const ids = ["run_00000000000000aa", "run_00000000000000bb", "run_00000000000000cc"];
      for (const [i, runId] of ids.entries()) {
        const ref = path.join(dir, `run-${i}.json`);
        await store.create(ref, [created(store, runId)], AT);
        await store.update(
          ref,
          () => ({
            events: [{ type: "stop_raised", actor: "test", data: { reason: "a", workflow: null, note: null } }],
            result: undefined,
          }),
          { now: () => AT },
        );
      }
      expect((await store.notifications.due(Date.now(), 100)).map((e) => e.run_id).sort()).toEqual(ids);
      // Attack: a broken outbox file for one run (first in the listing).
      writeFileSync(path.join(home.dir, "notify", "outbox", `${ids[0]}.json`), "{ not json");
      const notes: Array<Record<string, unknown>> = [];
      const due = await store.notifications.due(Date.now(), 100, (l) => notes.push(l));
      expect(due.map((e) => e.run_id).sort()).toEqual(ids.slice(1));
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatchObject({ run: ids[0] });
      expect(String(notes[0]?.error)).toMatch(/not JSON/);
      // The others' deliveries still leave their files (a restart does not send them again).
      for (const e of due) await store.notifications.delivered(e);
      const removed = async () => {
        const again = folderRunStore(openGateHome(home.dir));
        try {
          return (await again.notifications.due(Date.now(), 100)).length === 0;
        } finally {
          await again.close();
        }
      };
      for (let i = 0; i < 200 && !(await removed()); i++) await new Promise((r) => setTimeout(r, 20));
      expect(await removed()).toBe(true);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes the removals of delivered entries when it is closed, and never rebuilds the folders of a home removed after", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-folder-outbox-"));
    try {
      const home = openGateHome(path.join(dir, "home"), { create: true });
      const store = folderRunStore(home);
      await store.notifications.addWebhook(webhook());
      const runId = "run_00000000000000dd";
      const ref = path.join(dir, "run.json");
      await store.create(ref, [created(store, runId)], AT);
      await store.update(ref, () => ({ events: [stopDraft("a"), stopDraft("b")], result: undefined }), { now: () => AT });
      const [first] = await store.notifications.due(Date.now(), 10);
      await store.notifications.delivered(first as NonNullable<typeof first>);
      await store.close();
      // Written by the close itself, not a moment later: nothing of the store writes after it.
      const file = JSON.parse(readFileSync(path.join(home.dir, "notify", "outbox", `${runId}.json`), "utf8")) as { entries: unknown[] };
      expect(file.entries).toHaveLength(1);
      rmSync(home.dir, { recursive: true, force: true });
      // A late write (a deliverer that outlived the test's world) is refused; the home is not partly made again.
      const [second] = await folderRunStore({ ...home }).notifications.due(Date.now(), 10);
      expect(second).toBeUndefined();
      await store.notifications.delivered({ ...(first as NonNullable<typeof first>), id: "msg_late" });
      await store.notifications.flush();
      await expect(store.notifications.addWebhook(webhook())).rejects.toThrow(/gate home .* is gone/);
      await expect(store.notifications.failed(first as NonNullable<typeof first>, Date.now(), "HTTP 500")).rejects.toThrow(/is gone/);
      expect(existsSync(home.dir)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
