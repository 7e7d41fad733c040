import { describe, expect, it } from "vitest";
import { agentToolOf } from "./agent-tool.js";

describe("agentToolOf", () => {
  it("names Codex and Gemini by their program, however they are started", () => {
    expect(agentToolOf(["codex", "exec", "fix it"])).toBe("codex");
    expect(agentToolOf(["/opt/x/node_modules/.bin/codex"])).toBe("codex");
    expect(agentToolOf(["gemini", "-p", "fix it"])).toBe("gemini");
    expect(agentToolOf(["node", "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js", "-p", "x"])).toBe("gemini");
    expect(agentToolOf(["npx", "-y", "@openai/codex", "exec", "x"])).toBe("codex");
    expect(agentToolOf(["/usr/bin/node", "--no-warnings", "/x/bin/codex.js"])).toBe("codex");
  });

  it("names them however a package runner or a versioned package starts them, and Codex's release binaries", () => {
    const cases: [string[], string][] = [
      [["npx", "@openai/codex@0.169.0", "exec", "x"], "codex"],
      [["npx", "@openai/codex@latest"], "codex"],
      [["npx", "-y", "@google/gemini-cli@0.61.0", "-p", "x"], "gemini"],
      [["npx", "--yes", "--package=@openai/codex@0.169.0", "codex", "exec"], "codex"],
      [["npx", "-p", "@google/gemini-cli", "gemini"], "gemini"],
      [["bun", "x", "@openai/codex"], "codex"],
      [["bunx", "@google/gemini-cli@0.61.0"], "gemini"],
      [["pnpm", "dlx", "@google/gemini-cli"], "gemini"],
      [["pnpx", "@openai/codex@0.169.0"], "codex"],
      [["yarn", "dlx", "@openai/codex@0.169.0", "exec"], "codex"],
      [["npm", "exec", "--yes", "--", "@openai/codex@0.169.0", "exec"], "codex"],
      [["codex-x86_64-unknown-linux-musl", "exec"], "codex"],
      [["/opt/codex/codex-aarch64-unknown-linux-gnu"], "codex"],
      [["node", "-r", "x.cjs", "codex.js"], "codex"],
      [["node", "--require", "x.cjs", "--import=y.mjs", "/g/node_modules/@google/gemini-cli/dist/index.js"], "gemini"],
      [["bun", "run", "/x/bin/codex.js"], "codex"],
      [["npx", "gemini@0.61.0"], "gemini"],
    ];
    for (const [cmd, tool] of cases) expect(agentToolOf(cmd), cmd.join(" ")).toBe(tool);
  });

  it("names Claude Code by its program, its release binary and its package", () => {
    expect(agentToolOf(["claude", "-p", "x"])).toBe("claude");
    expect(agentToolOf(["/x/node_modules/@anthropic-ai/claude-code/bin/claude.exe", "-p", "x"])).toBe("claude");
    expect(agentToolOf(["node", "/x/node_modules/@anthropic-ai/claude-code/cli.js"])).toBe("claude");
    expect(agentToolOf(["npx", "-y", "@anthropic-ai/claude-code@2.1.328", "-p", "x"])).toBe("claude");
  });

  it("names no tool for another program, or a program merely called with codex as an argument", () => {
    expect(agentToolOf(["bash", "-c", "claude -p x"])).toBeUndefined();
    expect(agentToolOf(["bash", "-c", "codex exec x"])).toBeUndefined();
    expect(agentToolOf(["env", "codex"])).toBeUndefined();
    expect(agentToolOf(["codex-wrapper"])).toBeUndefined();
    expect(agentToolOf([])).toBeUndefined();
    expect(agentToolOf(["constructor"])).toBeUndefined();
    expect(agentToolOf(["codex-helper-x"])).toBeUndefined();
    expect(agentToolOf(["npx", "prettier@3"])).toBeUndefined();
    expect(agentToolOf(["pnpm", "install", "codex"])).toBeUndefined();
    expect(agentToolOf(["node", "-r", "codex.js", "build.js"])).toBeUndefined();
  });
});
