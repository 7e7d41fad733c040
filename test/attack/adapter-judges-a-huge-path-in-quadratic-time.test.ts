/*
 * The in-process adapters judge a tool call synchronously on the host's own
 * event loop, with no deadline and no worker (the CLI hook has both) and no
 * budget on the input the model chose. resolveRealPath walks a path that does
 * not exist one part at a time, copying the rest and calling lstat and
 * realpath on each parent: quadratic in the path's length. A write_file whose
 * `path` is "a/" repeated 16,000 times (32 KB) holds the host ~6 s; 128 KB,
 * about a minute and a half; the 16 MiB the CLI hook's budget admits, for
 * good. No file system takes a path longer than PATH_MAX (4096 bytes), so a
 * longer one can be denied by its length before a file is looked at.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { claudeToolJudge } from "../../src/adapters/claude-agent-sdk.js";
import { executorGate } from "../../src/adapters/executor-gate.js";
import { admitAndBind, consentedRun, WRITE_SCOPES } from "../../src/test-support/adapter-runs.js";
import { removeGateRuns } from "../../src/test-support/run-fixture.js";

afterAll(removeGateRuns);

/** Longer than any path a file system takes (PATH_MAX), short enough that the quadratic walk still ends in well under a second. */
const LONG = `${"a/".repeat(2600)}x.go`;

describe("an adapter given a path longer than any file system takes", () => {
  it("denies the executor's write by the path's length, before walking the file system (ai-sdk, openai-agents, langgraph)", async () => {
    const { g } = await consentedRun();
    const { env } = await admitAndBind(g);
    const gate = executorGate({ home: g.home, env, cwd: path.join(g.dir), tools: WRITE_SCOPES });
    const j = gate.judge("write_file", { path: LONG, content: "x" });
    expect(j.allow).toBe(false);
    expect(j.allow === false && j.reason).toMatch(/longer than|too long|bytes/);
  });

  it("denies Claude Code's Write by the path's length, before walking the file system (claude-agent-sdk)", async () => {
    const { g } = await consentedRun();
    const { env } = await admitAndBind(g);
    const j = claudeToolJudge({ home: g.home, env, cwd: g.dir })("Write", { file_path: path.join(g.dir, LONG), content: "x" });
    expect(j.allow).toBe(false);
    expect(j.allow === false && j.reason).toMatch(/longer than|too long|bytes/);
  });
});
