import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BINDING_FORMAT, type SessionBinding } from "../home/session-binding.js";
import { MCP_TOOLS } from "../mcp/create-twinlock-mcp-server.js";
import { AGENT_CONTRACTS, type Agent, readHookInput } from "./agent-contracts.js";
import { decideToolCall, PLANNER_MCP_TOOLS } from "./decide-tool-call.js";
import type { ToolCall } from "./tool-call.js";

const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "twinlock-planner-decide-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const project = path.join(root, "project");
const handoff = path.join(project, "agent-work", "handoff");
const outside = path.join(root, "outside");
mkdirSync(path.join(project, "cart"), { recursive: true });
mkdirSync(handoff, { recursive: true });
mkdirSync(outside);

const planner: SessionBinding = {
  format: BINDING_FORMAT,
  kind: "planner",
  store: "folder",
  run_id: "run_0123456789abcdef",
  run_file: path.join(project, "agent-work", "run.json"),
  executor: "MD-30",
  planner: "MD-29",
  handoff_hash: null,
  revision: 0,
  actions: [],
  targets: [],
  project_dir: project,
  checkout_dir: null,
  handoff_dir: handoff,
  manifest: [],
  consent_expires_at: null,
  checkpoint: { seq: 1, head: `sha256:${"cd".repeat(32)}` },
  process: { pid: 1, start: null, boot_id: null },
  secret_sha256: "0".repeat(64),
  created_at: new Date(0).toISOString(),
};

/** The call an agent tool's input classifies as, in that tool's contract. */
function classify(agent: Agent, input: Record<string, unknown>): ToolCall {
  const read = readHookInput({ cwd: project, ...input });
  if ("problem" in read) throw new Error(read.problem);
  return AGENT_CONTRACTS[agent].classify(read);
}
const write = (file: string, cwd: string = project) => classify("claude", { tool_name: "Write", tool_input: { file_path: file }, cwd });
const bash = (command: string, cwd: string = project) => classify("claude", { tool_name: "Bash", tool_input: { command }, cwd });
const passes = (call: ToolCall) => decideToolCall(call, planner).pass;
const reason = (call: ToolCall) => {
  const d = decideToolCall(call, planner);
  return d.pass ? "" : d.reason;
};

describe("a planner's session", () => {
  it("writes inside its handoff folder, by relative or absolute path", () => {
    expect(passes(write("agent-work/handoff/report.md"))).toBe(true);
    expect(passes(write(path.join(handoff, "evidence_index.json"), outside))).toBe(true);
    expect(passes(write("new/deeper/file.json", handoff))).toBe(true);
  });

  it("never writes an action target or anything outside the handoff folder, through .. either", () => {
    expect(reason(write("cart/cache.go"))).toMatch(/outside the planner's handoff folder/);
    expect(passes(write("agent-work/run.json"))).toBe(false);
    expect(passes(write("agent-work/handoff/../../cart/cache.go"))).toBe(false);
    expect(passes(write("/etc/passwd"))).toBe(false);
    expect(reason(write("~/.bashrc"))).toMatch(/starts with ~/);
  });

  it("never writes through a symbolic link, whether it leads out of the handoff folder or stays inside", () => {
    symlinkSync(path.join(project, "cart"), path.join(handoff, "out"));
    expect(reason(write("agent-work/handoff/out/cache.go"))).toMatch(/outside the planner's handoff folder/);
    symlinkSync(path.join(project, "cart", "cache.go"), path.join(handoff, "dangling.go"));
    expect(passes(write("agent-work/handoff/dangling.go"))).toBe(false);
    mkdirSync(path.join(handoff, "real"));
    symlinkSync(path.join(handoff, "real"), path.join(handoff, "alias"));
    expect(reason(write("agent-work/handoff/alias/x.md"))).toMatch(/goes through a symbolic link/);
  });

  it("never writes a .git folder into the handoff folder, where a planted repository would choose what git runs", () => {
    expect(reason(write("agent-work/handoff/.git/config"))).toMatch(/\.git folder/);
    expect(passes(write("agent-work/handoff/sub/.GIT/hooks/post-checkout"))).toBe(false);
  });

  it("applies the same rule to every tool's writes (Codex apply_patch, Gemini write_file, Cursor Write)", () => {
    const patch = (file: string) => `*** Begin Patch\n*** Add File: ${file}\n+x\n*** End Patch\n`;
    expect(passes(classify("codex", { tool_name: "apply_patch", tool_input: { command: patch("agent-work/handoff/a.md") } }))).toBe(true);
    expect(passes(classify("codex", { tool_name: "apply_patch", tool_input: { command: patch("cart/cache.go") } }))).toBe(false);
    expect(passes(classify("gemini", { tool_name: "write_file", tool_input: { file_path: "cart/cache.go" } }))).toBe(false);
    expect(passes(classify("gemini", { tool_name: "save_memory", tool_input: { fact: "x" } }))).toBe(false);
    expect(passes(classify("cursor", { tool_name: "Delete", tool_input: { path: "cart/cache.go" } }))).toBe(false);
  });

  it("runs read-only commands in the project and its handoff folder, and nothing else", () => {
    expect(passes(bash("git log --oneline -n 3 && grep -rn TODO cart"))).toBe(true);
    expect(passes(bash("cat report.md", handoff))).toBe(true);
    expect(reason(bash("echo x > cart/cache.go"))).toMatch(/writes a file.*read-only commands/);
    expect(reason(bash("ls", outside))).toMatch(/outside the project/);
  });

  it("runs no git inside the handoff folder, where the planner could have made a repository", () => {
    expect(reason(bash("git status", handoff))).toMatch(/git runs outside the handoff folder only/);
  });

  it("judges git in the handoff folder by the words the shell gives the program: g\\it, g'i't and \"git\" are git", () => {
    for (const command of ["g\\it rev-parse --show-toplevel", "g'i't status", '"git" log', "ls && g\\it status"])
      expect(reason(bash(command, handoff)), command).toMatch(/git runs outside the handoff folder only/);
    expect(passes(classify("codex", { tool_name: "shell", tool_input: { command: ["bash", "-lc", "g\\it status"] }, cwd: handoff }))).toBe(
      false,
    );
    // A path naming .git, backslashed or not, is judged unquoted too.
    expect(reason(bash("cat .G\\it/config", handoff))).toMatch(/no command there may name git/);
    expect(passes(bash("g\\it status"))).toBe(true);
  });

  it("never lets uniq write its second operand, given after -- or starting with -, in the project or the handoff folder", () => {
    expect(reason(bash("uniq -- agent-work/handoff/report.md -pwned"))).toMatch(/more than 1 operand/);
    expect(reason(bash("uniq -- payload.md -d/../../../README.victim", handoff))).toMatch(/more than 1 operand/);
    expect(passes(bash("uniq -- cfg -d/../../../.g\\it/config", handoff))).toBe(false);
    expect(passes(bash("sort report.md | uniq -c", handoff))).toBe(true);
  });

  it("denies a shell call it cannot read as a command line: PowerShell, Codex write_stdin, exec_command with its own shell", () => {
    expect(passes(classify("claude", { tool_name: "PowerShell", tool_input: { command: "ls" } }))).toBe(false);
    expect(passes(classify("codex", { tool_name: "write_stdin", tool_input: { session_id: 1, chars: "rm -rf x\n" } }))).toBe(false);
    expect(passes(classify("codex", { tool_name: "exec_command", tool_input: { cmd: "ls", shell: "/usr/bin/python3" } }))).toBe(false);
    expect(passes(classify("codex", { tool_name: "exec_command", tool_input: { cmd: "ls", command: "rm x" } }))).toBe(false);
    expect(passes(classify("codex", { tool_name: "exec_command", tool_input: { cmd: "ls" } }))).toBe(true);
    expect(passes(classify("codex", { tool_name: "shell", tool_input: { command: ["bash", "-lc", "ls -la"] } }))).toBe(true);
    expect(passes(classify("codex", { tool_name: "shell", tool_input: { command: ["bash", "-lc", "rm x"] } }))).toBe(false);
  });

  it("calls twinlock's own MCP agent tools, as each agent tool names them, and no other MCP tool", () => {
    for (const tool of PLANNER_MCP_TOOLS) {
      expect(passes(classify("claude", { tool_name: `mcp__twinlock__${tool}`, tool_input: {} })), tool).toBe(true);
      expect(passes(classify("codex", { tool_name: `mcp__twinlock__${tool}`, tool_input: {} })), tool).toBe(true);
      expect(passes(classify("gemini", { tool_name: `mcp_twinlock_${tool}`, tool_input: {} })), tool).toBe(true);
      expect(passes(classify("cursor", { tool_name: `MCP:${tool}`, tool_input: {} })), tool).toBe(true);
    }
    expect(reason(classify("claude", { tool_name: "mcp__github__create_issue", tool_input: {} }))).toMatch(/only twinlock's own MCP tools/);
    // Another server's tool of the same name is not twinlock's.
    expect(passes(classify("claude", { tool_name: "mcp__evil__twinlock_submit_handoff", tool_input: {} }))).toBe(false);
    // Reporting a result closes the pair: not a planner's step.
    expect(passes(classify("claude", { tool_name: "mcp__twinlock__twinlock_report_result", tool_input: {} }))).toBe(false);
    expect(passes(classify("claude", { tool_name: "mcp__twinlock__twinlock_submit_handoff_x", tool_input: {} }))).toBe(false);
  });

  it("lets through no other outward call: the web, subagents, skills", () => {
    for (const tool of ["WebFetch", "WebSearch", "Task", "Agent", "Skill"])
      expect(passes(classify("claude", { tool_name: tool, tool_input: {} })), tool).toBe(false);
    expect(passes(classify("gemini", { tool_name: "web_fetch", tool_input: {} }))).toBe(false);
  });

  it("offers only MCP tools the twinlock server has", () => {
    for (const tool of PLANNER_MCP_TOOLS) expect(MCP_TOOLS).toContain(tool);
  });
});

describe("an executor's session, beside a planner's", () => {
  it("is judged by the executor's rules: its checkout and targets, never the planner's handoff folder", () => {
    const checkout = path.join(root, "checkout");
    mkdirSync(checkout);
    const executor: SessionBinding = {
      ...planner,
      kind: "executor",
      handoff_hash: `sha256:${"ab".repeat(32)}`,
      targets: [path.join(project, "cart", "cache.go")],
      checkout_dir: checkout,
      handoff_dir: null,
    };
    expect(decideToolCall(write("cart/cache.go"), executor).pass).toBe(true);
    expect(decideToolCall(write("agent-work/handoff/report.md"), executor).pass).toBe(false);
    expect(decideToolCall(write("cart/cache.go"), planner).pass).toBe(false);
  });
});
