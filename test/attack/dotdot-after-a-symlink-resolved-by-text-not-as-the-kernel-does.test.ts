/*
 * resolveRealPath (the executor's write check, in every adapter and the CLI
 * hook) starts with path.resolve, which removes `x/..` as text. The kernel
 * follows `x` first when it is a symbolic link, and only then goes up from
 * where it points. The agent makes cart/sub a link to a folder outside the
 * targets (its shell runs in the project; here the test makes it), then asks
 * the write tool for cart/sub/../cache.go: the gate judges cart/cache.go, an
 * admitted target, and allows; a tool that hands the path to fs as given, the
 * plainest write tool there is, writes elsewhere/cache.go.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { gateTools } from "../../src/adapters/ai-sdk.js";
import { admitAndBind, BEFORE, consentedRun, WRITE_SCOPES, WRITTEN } from "../../src/test-support/adapter-runs.js";
import { removeGateRuns } from "../../src/test-support/run-fixture.js";

afterAll(removeGateRuns);

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

describe("an executor's write through a symbolic link and then ..", () => {
  it("denies a write whose path reaches outside the targets once its links are followed as the kernel follows them", async () => {
    const { g, target } = await consentedRun();
    const { env } = await admitAndBind(g);
    const dir = realpathSync(g.dir);
    mkdirSync(path.join(dir, "elsewhere", "deep"), { recursive: true });
    // What the agent's own shell call (`ln -s`, in the project) would make.
    symlinkSync(path.join(dir, "elsewhere", "deep"), path.join(dir, "cart", "sub"));
    const write_file = tool({
      description: "Write a file",
      inputSchema: z.object({ path: z.string(), content: z.string() }),
      execute: async ({ path: p, content }) => {
        writeFileSync(p, content);
        return "written";
      },
    });
    let step = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () =>
        step++ === 0
          ? {
              content: [
                {
                  type: "tool-call",
                  toolCallId: "call-1",
                  toolName: "write_file",
                  input: JSON.stringify({ path: `${path.join(dir, "cart", "sub")}/../cache.go`, content: WRITTEN }),
                },
              ],
              finishReason: { unified: "tool-calls", raw: "tool_calls" },
              usage,
              warnings: [],
            }
          : { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] },
    });
    await generateText({
      model,
      prompt: "apply the plan",
      tools: gateTools({ write_file }, { home: g.home, env, cwd: dir, scopes: WRITE_SCOPES }),
      stopWhen: stepCountIs(3),
    });
    expect(existsSync(path.join(dir, "elsewhere", "cache.go"))).toBe(false);
    expect(readFileSync(target, "utf8")).toBe(BEFORE);
  });
});
