import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freezePairHandoff } from "../gate/freeze-pair-handoff.js";
import { pinSuite } from "../home/suite-pins.js";
import { countTurns } from "../test-support/count-turns.js";
import { call, PLANNER, removeServerWorlds, reviewerFor, type ServerWorld, serverWorld } from "../test-support/gate-server-fixture.js";
import { TEST_PINNER } from "../test-support/run-fixture.js";
import { agentDocumentsRenderStats } from "../web/render-agent-documents-off-thread.js";

afterEach(() => removeServerWorlds());

const EXECUTOR_FILE = "debugging/md-30-debugging-executor.md";

/** 64 KiB of one-column tables whose every row has cells past the header: the renderer's slowest input as measured. */
function hostileTables(label: string): string {
  const row = "| a | b | c | d | e | f | g | h |\n";
  let text = `${label}\n\n| x |\n|---|\n`;
  while (text.length < 64 * 1024 - row.length) text += row;
  return text;
}

/** Turns of the event loop while one revision page is asked for and answered, and the page. */
async function pageTurns(w: ServerWorld, cookie: string): Promise<{ turns: number; html: string }> {
  const stop = countTurns();
  const r = await call(w, `/runs/${w.runId}/pairs/${PLANNER}/revisions/1`, { cookie, headers: { accept: "text/html" } });
  const html = await r.text();
  const turns = stop();
  expect(r.status).toBe(200);
  return { turns, html };
}

/*
 * The bar is 5,000 turns: rendered on the thread, the page's Markdown (two times 64 KiB of tables, about 1.4 s) let
 * through only the turns of the page's other work off the thread (869, measured with the old code); rendered on a
 * worker, the loop turns all along (142,000 to 255,000 measured on a machine shared by eight sessions).
 */
describe("the server's event loop while a revision page renders the agent's Markdown", () => {
  it("keeps turning while an executor and a report of 64 KiB of tables are rendered, and renders a revision asked for again from its hash", async () => {
    const w = await serverWorld({ signing: true });
    const alice = await reviewerFor(w, "alice");
    const file = path.join(w.suite, EXECUTOR_FILE);
    const source = readFileSync(file, "utf8");
    const head = source.slice(0, source.indexOf("\n---\n", 4) + 5);
    writeFileSync(file, `${head}${hostileTables("EXECUTOR-TABLES")}`);
    await pinSuite(w.store.home, { suiteDir: w.suite, key: TEST_PINNER });
    writeFileSync(path.join(w.handoff, "report.md"), hostileTables("REPORT-TABLES"));
    await freezePairHandoff({ store: w.store, run: w.runFile, planner: PLANNER, handoffDir: w.handoff, key: w.plannerKey });

    const first = await pageTurns(w, alice.cookie);
    expect(first.turns).toBeGreaterThan(5000);
    // Both documents are rendered, tables as tables with the cells past the header shown.
    expect(first.html).toContain("EXECUTOR-TABLES");
    expect(first.html).toContain("REPORT-TABLES");
    expect(first.html).toContain('<td class="cell-past-header">h</td>');

    const before = agentDocumentsRenderStats();
    const again = await pageTurns(w, alice.cookie);
    // Asked again, the revision's rendering is the one kept: no worker renders it a second time.
    expect(agentDocumentsRenderStats().rendered).toBe(before.rendered);
    expect(again.html).toBe(first.html);
  }, 120_000);
});
