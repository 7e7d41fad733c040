import { describe, expect, it } from "vitest";
import { judgeToolCall } from "./judge-tool-call.js";
import type { ToolCall } from "./tool-call.js";

const env = { TWINLOCK_RUN: "/nowhere/run.json", TWINLOCK_EXECUTOR: "MD-30", TWINLOCK_SESSION: "5".repeat(64) };

describe("judgeToolCall", () => {
  it("passes a read without a binding, as the CLI hook does, and denies it when reads must be bound", () => {
    expect(judgeToolCall({ call: { kind: "read", tool: "Read" }, env: {}, home: undefined })).toEqual({ allow: true });
    const bound = judgeToolCall({ call: { kind: "read", tool: "Read" }, env, home: undefined, bindReads: true });
    expect(bound).toMatchObject({
      allow: false,
      reason: expect.stringMatching(/^twinlock: Read denied: the hook command names no gate home/),
    });
  });

  it("denies a write when no session holds, naming why", () => {
    const j = judgeToolCall({ call: { kind: "write", tool: "Write", paths: ["a"], cwd: null }, env: {}, home: "/nonexistent" });
    expect(j).toMatchObject({ allow: false, reason: expect.stringContaining("no twinlock session is bound") });
  });

  it("fails closed: an error while judging is a deny with its message", () => {
    const call = {
      kind: "write",
      tool: "Write",
      get paths(): string[] {
        throw new Error("paths exploded");
      },
      cwd: null,
    } as ToolCall;
    const j = judgeToolCall({ call, env, home: "/nonexistent" });
    expect(j).toMatchObject({ allow: false });
    const unbound = judgeToolCall({ call, env: {}, home: undefined });
    expect(unbound.allow).toBe(false);
  });
});
