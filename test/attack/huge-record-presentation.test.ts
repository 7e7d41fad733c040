/**
 * An availability attack on reading a plan: the agent freezes a handoff
 * whose evidence_index.json is 16 MiB of 58,000 evidence records (within
 * the record budget). The plan API with the agent's token, the reviewer's
 * revision page and the MCP plan resource each served every record whole:
 * 76 MB of response, 13–23 s with the server's event loop stalled. Now each
 * shows the first records within RECORD_SHOW_BUDGET, says before the
 * records and beside the decision that the rest are not shown, and names
 * the record file's sha256, where its bytes are and how to read it whole.
 * The default run adds 12,000 records (3.4 MB, seven times the response
 * bound, 24 times the records shown); TWINLOCK_SOAK=1 the attack's 58,000.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentToken } from "../../src/server/agent-tokens.js";
import { countTurns } from "../../src/test-support/count-turns.js";
import {
  apiOf,
  call,
  jsonOf,
  PLANNER,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
} from "../../src/test-support/gate-server-fixture.js";
import { mcpClientFor } from "../../src/test-support/mcp-client.js";
import { SOAK } from "../support/soak.js";

afterAll(() => removeServerWorlds());

/** At most this much of a response for a plan of any size: the records' budget, the files' heads, the page around them. */
const MOST_BYTES = 512 * 1024;
/** Evidence records added to the demo's two: the attack's 58,000 (16 MiB) under TWINLOCK_SOAK=1. */
const ADDED = SOAK ? 58_000 : 12_000;
const TOTAL = ADDED + 2;

type Evidence = { id: string; source: string; observed: string; collected_at: string };

/** The demo handoff's evidence_index.json with `count` more records, each ~285 bytes: 58,000 of them make 16 MiB. */
function hugeEvidence(handoff: string, count: number): { text: string; records: Evidence[] } {
  const file = path.join(handoff, "evidence_index.json");
  const index = JSON.parse(readFileSync(file, "utf8")) as { evidence: Evidence[] };
  const pad = "x".repeat(180);
  for (let i = 0; i < count; i++)
    index.evidence.push({ id: `EX${i}`, source: `logs/${i}.txt`, observed: `line ${i}: ${pad}`, collected_at: "2026-11-28T09:12:00Z" });
  const text = JSON.stringify(index);
  writeFileSync(file, text);
  return { text, records: index.evidence };
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

describe(`a plan whose evidence_index.json is ${SOAK ? "16 MiB" : "3.4 MB"} of ${ADDED.toLocaleString("en-US")} evidence records`, () => {
  let w: ServerWorld;
  let token: string;
  let cookie: string;
  let record: { text: string; records: Evidence[] };

  beforeAll(async () => {
    w = await serverWorld();
    cookie = (await reviewerFor(w, "alice")).cookie;
    token = (await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId })).token;
    record = hugeEvidence(w.handoff, ADDED);
    expect(Buffer.byteLength(record.text)).toBeGreaterThan(SOAK ? 16 * 1000 * 1000 : 6 * MOST_BYTES);
    const frozen = await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
    expect(frozen.status, await frozen.clone().text()).toBe(200);
  }, 120_000);

  it(`is answered to the agent's token in a few hundred KB: the first evidence records as written, how many of ${TOTAL.toLocaleString("en-US")} are shown, and the record file's sha256`, async () => {
    // The first ask reads and cuts the record on a worker thread: the server's event loop keeps turning meanwhile.
    const stopCounting = countTurns();
    const r = await call(w, apiOf(w).plan, { token });
    const turns = stopCounting();
    const text = await r.text();
    expect(r.status).toBe(200);
    expect(turns).toBeGreaterThan(200);
    expect(text.length).toBeLessThan(MOST_BYTES);
    const plan = (JSON.parse(text) as { plan: Record<string, never> }).plan as {
      model: { evidence: Array<{ id: string; source: unknown }> };
      recordsNotShown: { kinds: unknown[]; recordFiles: Array<{ path: string; sha256: string }>; notice: string } | null;
      markdown: string;
    };
    const shown = plan.model.evidence;
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.length).toBeLessThan(record.records.length);
    // Every record shown is the record as the planner wrote it, in order.
    expect(shown.map((e) => e.source)).toEqual(record.records.slice(0, shown.length));
    expect(plan.recordsNotShown?.kinds).toEqual([{ kind: "evidence", shown: shown.length, total: TOTAL }]);
    expect(plan.recordsNotShown?.recordFiles).toContainEqual(
      expect.objectContaining({ path: "evidence_index.json", sha256: sha256(record.text) }),
    );
    const notice = plan.recordsNotShown?.notice ?? "";
    expect(notice).toContain(`evidence: the first ${shown.length} of ${TOTAL.toLocaleString("en-US")}`);
    expect(notice).toContain(`sha256 ${sha256(record.text)}`);
    // The Markdown says it before the records and again beside the decision, with how to read all of it.
    const decide = plan.markdown.indexOf("## Decide");
    expect(plan.markdown.indexOf("**Not the whole plan.**")).toBeLessThan(plan.markdown.indexOf("## Findings"));
    expect(plan.markdown.slice(decide)).toContain(`sha256 ${sha256(record.text)}`);
    expect(plan.markdown.slice(decide)).toContain("twinlock checkout");
  });

  it("is the reviewer's revision page of a few hundred KB, saying before the records and beside the forms which part is shown", async () => {
    const r = await call(w, `/runs/${w.runId}/pairs/${PLANNER}/revisions/1`, { cookie, headers: { accept: "text/html" } });
    const page = await r.text();
    expect(r.status).toBe(200);
    expect(page.length).toBeLessThan(MOST_BYTES);
    expect(page).toContain(`Evidence (${TOTAL}; the first `);
    const banner = page.indexOf("<strong>Not the whole plan.</strong>");
    expect(banner).toBeGreaterThan(-1);
    expect(banner).toBeLessThan(page.indexOf('id="evidence-h"'));
    const decide = page.slice(page.indexOf('id="decide-h"'));
    expect(decide).toContain("<strong>Not the whole plan.</strong>");
    expect(decide).toContain(`sha256 ${sha256(record.text)}`);
    expect(decide.indexOf("Not the whole plan")).toBeLessThan(decide.indexOf("<form"));
  });

  it("is the MCP plan resource of a few hundred KB, with the same notice and sha256", async () => {
    const client = await mcpClientFor(w, token);
    try {
      const read = await client.readResource({ uri: `twinlock://runs/${w.runId}/pairs/${PLANNER}/revisions/1/plan` });
      const text = (read.contents[0] as { text: string }).text;
      expect(text.length).toBeLessThan(MOST_BYTES);
      expect(text).toContain("**Not the whole plan.**");
      expect(text).toContain(`sha256 ${sha256(record.text)}`);
      expect(text).toContain("## Findings (");
    } finally {
      await client.close();
    }
  });
});

describe("a plan of a few records", () => {
  it("is shown whole, with no notice that anything is not", async () => {
    const w = await serverWorld();
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
    const plan = await jsonOf(await call(w, apiOf(w).plan, { token }));
    const p = plan.body.plan as { recordsNotShown: unknown; markdown: string; model: { evidence: Array<{ source: unknown }> } };
    expect(p.recordsNotShown).toBeNull();
    expect(p.markdown).not.toContain("Not the whole plan");
    const written = JSON.parse(readFileSync(path.join(w.handoff, "evidence_index.json"), "utf8")) as { evidence: unknown[] };
    expect(p.model.evidence.map((e) => e.source)).toEqual(written.evidence);
  });
});
