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
    for (const [cmd, tool] of cases) expect(failOpenToolOf(cmd), cmd.join(" ")).toBe(tool);
  });

  it("names no tool for Claude Code, another program, or a program merely called with codex as an argument", () => {
    expect(failOpenToolOf(["claude", "-p", "x"])).toBeUndefined();
    expect(failOpenToolOf(["bash", "-c", "codex exec x"])).toBeUndefined();
    expect(failOpenToolOf(["env", "codex"])).toBeUndefined();
    expect(failOpenToolOf(["codex-wrapper"])).toBeUndefined();
    expect(failOpenToolOf([])).toBeUndefined();
    expect(failOpenToolOf(["constructor"])).toBeUndefined();
    expect(failOpenToolOf(["codex-helper-x"])).toBeUndefined();
    expect(failOpenToolOf(["npx", "prettier@3"])).toBeUndefined();
    expect(failOpenToolOf(["pnpm", "install", "codex"])).toBeUndefined();
    expect(failOpenToolOf(["node", "-r", "codex.js", "build.js"])).toBeUndefined();
  });
});

describe("toolArgumentsAt", () => {
  it("points after the program, or after the program a launcher starts", () => {
    expect(toolArgumentsAt(["codex", "exec"])).toBe(1);
    expect(toolArgumentsAt(["node", "--no-warnings", "/x/codex.js", "exec"])).toBe(3);
    expect(toolArgumentsAt(["npx", "@openai/codex", "exec"])).toBe(2);
    expect(toolArgumentsAt(["npx", "-y", "@openai/codex@0.169.0", "exec"])).toBe(3);
    expect(toolArgumentsAt(["pnpm", "dlx", "@openai/codex", "exec"])).toBe(3);
    expect(toolArgumentsAt(["node", "-r", "x.cjs", "codex.js", "exec"])).toBe(4);
    expect(toolArgumentsAt(["codex-x86_64-unknown-linux-musl", "exec"])).toBe(1);
  });
});
