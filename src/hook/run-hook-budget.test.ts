import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AGENT_CONTRACTS } from "./agent-contracts.js";
import { answerCall } from "./run-hook.js";

const options = process.env.NODE_OPTIONS;
beforeEach(() => {
  delete process.env.NODE_OPTIONS;
});
afterEach(() => {
  if (options !== undefined) process.env.NODE_OPTIONS = options;
});

const words = (a: { stdout?: string; stderr?: string }) => `${a.stdout ?? ""}${a.stderr ?? ""}`;

describe("the hook's input budget", () => {
  it("denies a tool call whose input holds an array of 200,000 elements before parsing it, naming the 100,000-element limit", () => {
    const text = `{"tool_name":"Edit","tool_input":{"file_path":"a.txt","edits":[${"0,".repeat(199_999)}0]}}`;
    const answer = answerCall(AGENT_CONTRACTS.claude, text, undefined);
    expect(words(answer)).toContain("more than 100,000 elements, over the limit for a hook input");
    expect(words(answer)).toContain("denied");
  });

  it("denies a tool call nested 100 levels deep, naming the 64-level limit", () => {
    const text = `{"tool_name":"Write","tool_input":{"file_path":"a.txt","content":${"[".repeat(100)}${"]".repeat(100)}}}`;
    const answer = answerCall(AGENT_CONTRACTS.claude, text, undefined);
    expect(words(answer)).toContain("more than 64 levels deep, over the limit for a hook input");
  });
});
