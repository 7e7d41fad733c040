import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { AgentTool } from "../sandbox/agent-tool.js";

/** Where each tool's npm package keeps the script its `.bin` link starts. */
const PACKAGE_SCRIPT: Record<AgentTool, string> = {
  claude: "@anthropic-ai/claude-code/cli.js",
  codex: "@openai/codex/bin/codex.js",
  gemini: "@google/gemini-cli/bundle/gemini.js",
};

/**
 * A stand-in for `tool` that exec identifies as that tool (a node script in
 * the tool's npm package, under `dir/node_modules`) and that runs the shell
 * script `script` (written beside it; rewrite it to change what the stand-in
 * does) with the tool's arguments, its exit status the stand-in's.
 */
export function agentStandIn(dir: string, tool: AgentTool, script: string): { program: string; script: string } {
  const program = path.join(dir, "node_modules", PACKAGE_SCRIPT[tool]);
  mkdirSync(path.dirname(program), { recursive: true });
  const shell = path.join(path.dirname(program), "stand-in.sh");
  writeFileSync(
    program,
    [
      "#!/usr/bin/env node",
      `const r = require("node:child_process").spawnSync("/bin/sh", [${JSON.stringify(shell)}, ...process.argv.slice(2)], { stdio: "inherit" });`,
      "process.exit(r.status ?? 1);",
      "",
    ].join("\n"),
  );
  chmodSync(program, 0o755);
  writeFileSync(shell, script);
  return { program, script: shell };
}
