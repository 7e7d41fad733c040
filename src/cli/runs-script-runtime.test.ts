import { describe, expect, it } from "vitest";
import { runsScriptRuntime } from "./runs-script-runtime.js";

describe("runsScriptRuntime", () => {
  it("tells an SDK agent's node script, also under sh -c, from an agent CLI", () => {
    expect(runsScriptRuntime(["node", "agent.mjs"])).toBe(true);
    expect(runsScriptRuntime(["/usr/bin/node", "agent.mjs"])).toBe(true);
    expect(runsScriptRuntime(["sh", "-c", "node agent.mjs cart/cache.go"])).toBe(true);
    expect(runsScriptRuntime(["claude"])).toBe(false);
    expect(runsScriptRuntime(["codex", "exec", "node"])).toBe(false);
    expect(runsScriptRuntime(["sh", "-c", "claude -p hi"])).toBe(false);
    expect(runsScriptRuntime([])).toBe(false);
  });
});
