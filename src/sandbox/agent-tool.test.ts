import { describe, expect, it } from "vitest";
import { failOpenToolOf, toolArgumentsAt } from "./agent-tool.js";

describe("failOpenToolOf", () => {
  it("names Codex and Gemini by their program, however they are started", () => {
    expect(failOpenToolOf(["codex", "exec", "fix it"])).toBe("codex");
    expect(failOpenToolOf(["/opt/x/node_modules/.bin/codex"])).toBe("codex");
    expect(failOpenToolOf(["gemini", "-p", "fix it"])).toBe("gemini");
    expect(failOpenToolOf(["node", "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js", "-p", "x"])).toBe("gemini");
    expect(failOpenToolOf(["npx", "-y", "@openai/codex", "exec", "x"])).toBe("codex");
    expect(failOpenToolOf(["/usr/bin/node", "--no-warnings", "/x/bin/codex.js"])).toBe("codex");
  });

  it("names no tool for Claude Code, another program, or a program merely called with codex as an argument", () => {
    expect(failOpenToolOf(["claude", "-p", "x"])).toBeUndefined();
    expect(failOpenToolOf(["bash", "-c", "codex exec x"])).toBeUndefined();
    expect(failOpenToolOf(["env", "codex"])).toBeUndefined();
    expect(failOpenToolOf(["codex-wrapper"])).toBeUndefined();
    expect(failOpenToolOf([])).toBeUndefined();
    expect(failOpenToolOf(["constructor"])).toBeUndefined();
  });
});

describe("toolArgumentsAt", () => {
  it("points after the program, or after the program a launcher starts", () => {
    expect(toolArgumentsAt(["codex", "exec"])).toBe(1);
    expect(toolArgumentsAt(["node", "--no-warnings", "/x/codex.js", "exec"])).toBe(3);
    expect(toolArgumentsAt(["npx", "@openai/codex", "exec"])).toBe(2);
  });
});
