/**
 * Two availability attacks on reading a plan. (1) The agent freezes two
 * revisions of a 117 KB file of random lines and asks for the plan with its
 * token: the line diff, quadratic on the server's only thread, blocked
 * `/healthz` for 13–16 s; the revision page and the MCP plan resource ran
 * the same diff. (2) The agent freezes a 560 MiB (sparse) file: `present`
 * read it whole into one string and died ("Cannot create a string longer
 * than …"), so the reviewer could not read the plan at all.
 */
import { createHash } from "node:crypto";
import { rmSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DIFF_BUDGET } from "../../src/handoff/diff-within-budget.js";
import { createAgentToken } from "../../src/server/agent-tokens.js";
import {
  apiOf,
  call,
  decide,
  hashNow,
  jsonOf,
  PLANNER,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
} from "../../src/test-support/gate-server-fixture.js";
import { mcpClientFor } from "../../src/test-support/mcp-client.js";
import { randomLines } from "../../src/test-support/random-lines.js";
import { runCli } from "../../src/test-support/run-cli.js";
import { driveTo, makeGateRun, removeGateRuns } from "../../src/test-support/run-fixture.js";

afterAll(() => {
  removeServerWorlds();
  removeGateRuns();
});

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** A served world whose handoff's notes.txt is `before` in revision 1 and `after` in revision 2, and the agent's token. */
async function twoRevisions(before: string, after: string): Promise<{ w: ServerWorld; token: string; cookie: string }> {
  const w = await serverWorld();
  const alice = await reviewerFor(w, "alice");
  const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
  writeFileSync(path.join(w.handoff, "notes.txt"), before);
  expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
  await decide(w, alice, apiOf(w).review, { handoff_hash: hashNow(w), decision: "changes_requested", feedback: "redo the notes" });
  writeFileSync(path.join(w.handoff, "notes.txt"), after);
  expect((await call(w, apiOf(w).freeze, { token, json: {} })).status).toBe(200);
  return { w, token, cookie: alice.cookie };
}

type PlanFile = { path: string; diff: string | null; diffNotShown?: Record<string, unknown>; shown: string; text: string | null };

describe("a plan whose file changed into 117 KB of other random lines", () => {
  const before = randomLines(1, 3000);
  const after = randomLines(2, 3000);

  it("is answered 'too large to diff' with both revisions' sha256 and size: to the agent's token, on the revision page, by present and by the MCP plan resource", async () => {
    expect(after.length).toBeGreaterThan(117 * 1024);
    const { w, token, cookie } = await twoRevisions(before, after);
    const plan = await jsonOf(await call(w, apiOf(w).plan, { token }));
    expect(plan.status).toBe(200);
    const notes = (plan.body.plan as { files: PlanFile[] }).files.find((f) => f.path === "notes.txt") as PlanFile;
    expect(notes.diff).toBeNull();
    expect(notes.diffNotShown).toEqual({
      reason: "edits",
      limit: DIFF_BUDGET.maxEdits,
      found: 6000,
      before: { size: before.length, sha256: sha256(before) },
      after: { size: after.length, sha256: sha256(after) },
    });
    // The text itself is still shown whole: only the diff is left out.
    expect(notes).toMatchObject({ shown: "whole", text: after });

    const page = await (
      await call(w, `/runs/${w.runId}/pairs/${PLANNER}/revisions/2`, { cookie, headers: { accept: "text/html" } })
    ).text();
    expect(page).toContain(
      `Too large to diff: at least 6000 lines would be added or removed, over the limit of ${DIFF_BUDGET.maxEdits}. Revision 1 is ${before.length} bytes, sha256 ${sha256(before)}; revision 2 is ${after.length} bytes, sha256 ${sha256(after)}.`,
    );

    const r = await runCli(["present", w.runFile, PLANNER, "--home", w.home.dir]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toContain(`> Too large to diff: at least 6000 lines would be added or removed`);
    expect(r.stdout).toContain(`sha256 ${sha256(before)}; revision 2 is ${after.length} bytes, sha256 ${sha256(after)}.`);

    // The MCP plan resource is the same Markdown, read with the same token.
    const client = await mcpClientFor(w, token);
    try {
      const read = await client.readResource({ uri: `twinlock://runs/${w.runId}/pairs/${PLANNER}/revisions/2/plan` });
      const text = (read.contents[0] as { text: string }).text;
      expect(text).toContain(`> Too large to diff: at least 6000 lines would be added or removed`);
      expect(text).toContain(`sha256 ${sha256(before)}; revision 2 is ${after.length} bytes, sha256 ${sha256(after)}.`);
    } finally {
      await client.close();
    }
  });
});

describe("a plan whose diff needs the whole bounded search (the same lines, in reverse order)", () => {
  it("leaves the server answering /healthz, ten times over, before that plan is answered", async () => {
    const lines = Array.from({ length: 1500 }, (_, i) => `line ${i} of the notes\n`);
    const { w, token } = await twoRevisions(lines.join(""), [...lines].reverse().join(""));
    let planAnswered = false;
    const plan = call(w, apiOf(w).plan, { token }).then((r) => {
      planAnswered = true;
      return r;
    });
    const order: string[] = [];
    for (let i = 0; i < 10; i++) {
      // A turn of the event loop first: on a server that diffs on its only thread, the plan is all done by then.
      await new Promise((resolve) => setImmediate(resolve));
      const health = await call(w, "/healthz");
      expect(health.status).toBe(200);
      order.push(planAnswered ? "plan, then healthz" : "healthz");
    }
    expect(order).toEqual(Array(10).fill("healthz"));
    const answered = await jsonOf(await plan);
    expect(answered.status).toBe(200);
    const notes = (answered.body.plan as { files: PlanFile[] }).files.find((f) => f.path === "notes.txt") as PlanFile;
    expect(notes.diffNotShown).toMatchObject({ reason: "edits", limit: DIFF_BUDGET.maxEdits, found: null });
  });
});

describe("a handoff holding a 560 MiB file", () => {
  it("is presented: every record whole, the file by its first 64 KiB, its size and sha256, where all of it is and how to read it", async () => {
    const g = makeGateRun();
    const big = path.join(g.handoff, "dump.bin");
    // Sparse: 560 MiB of zeros that take no disk in the handoff (the gate's frozen copy does).
    writeFileSync(big, "");
    truncateSync(big, 560 * 1024 * 1024);
    try {
      await driveTo(g, "plan_review_pending");
      const r = await runCli(["present", g.runFile, PLANNER, "--home", g.home, "--json"]);
      expect(r.code, r.output).toBe(0);
      const p = JSON.parse(r.stdout) as { markdown: string; files: PlanFile[]; model: { actions: unknown[] } };
      const dump = p.files.find((f) => f.path === "dump.bin") as PlanFile & { shownBytes: number; frozenAt: string };
      expect(dump).toMatchObject({ shown: "head", shownBytes: 64 * 1024, text: null });
      const digest = "9045f32f79f3d60e6743770a6e284bea1ec7ec16ce2e9860a1041c40d1620385"; // sha256 of 560 MiB of zeros
      expect(dump.frozenAt).toBe(`blobs/90/${digest}`);
      expect(p.markdown).toContain(
        `> **Not the whole file**: only its first 65536 of 587202560 bytes are shown, because it is over the 1048576-byte limit for a file shown whole`,
      );
      expect(p.markdown).toContain(`All of it is in the gate home at blobs/90/${digest} (sha256 ${digest})`);
      expect(p.markdown).toContain(`twinlock checkout ${g.runFile} MD-30 DIR`);
      // The plan itself is all there: every action, whole.
      expect(p.model.actions.length).toBeGreaterThan(0);
      for (const heading of ["## Findings", "## Actions", "## Acceptance criteria", "## Decide"]) expect(p.markdown).toContain(heading);
    } finally {
      // The gate's frozen copy is real bytes: gone with the test, not left in the test file's home.
      rmSync(path.join(g.home, "blobs", "90", "9045f32f79f3d60e6743770a6e284bea1ec7ec16ce2e9860a1041c40d1620385"), { force: true });
      rmSync(big, { force: true });
    }
  });
});
