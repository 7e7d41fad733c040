import path from "node:path";
import type { SessionBinding } from "../home/session-binding.js";
import { isWithin, pathOverBudget, resolveRealPath, shownPath } from "../input/resolve-real-path.js";
import { judgePlannerCommand } from "./planner-shell.js";
import type { ToolCall } from "./tool-call.js";

/** The hook's decision: pass (say nothing that overrides the user's rules) or deny, with why. */
export type HookDecision = { pass: true } | { pass: false; reason: string };

/**
 * twinlock's own MCP tools a planner may call (a subset of the server's
 * MCP_TOOLS: a test holds them to it): status, readiness, freezing, asking
 * for review, waiting for the decision and the dry admission check — not reporting a result, which
 * closes the pair.
 */
export const PLANNER_MCP_TOOLS = [
  "twinlock_status",
  "twinlock_readiness",
  "twinlock_submit_handoff",
  "twinlock_request_review",
  "twinlock_check_admission",
  "twinlock_wait_for_review",
] as const;

/** The MCP server name the planner's MCP tools must come from, as each tool names them (`claude mcp add twinlock …`). */
export const TWINLOCK_MCP_SERVER = "twinlock";

/**
 * Decide one tool call (SPEC §11, §12). Reads pass. Unknown tools are
 * denied. Everything else needs a verified binding, and then depends on
 * whose session it is. An executor's write must name only paths inside the
 * admitted actions' targets or the checkout (after `..` and symbolic links
 * are resolved), its shell call must run inside the project or the
 * checkout, and its MCP and other outward calls pass on the binding alone.
 * A planner's session is `decidePlannerCall`'s.
 */
export function decideToolCall(call: ToolCall, binding: SessionBinding | { unbound: string }): HookDecision {
  if (call.kind === "read") return { pass: true };
  if (call.kind === "unknown")
    return { pass: false, reason: `twinlock: ${JSON.stringify(call.tool)} is not a tool the twinlock hook knows; denied` };
  if (call.kind === "unreadable") return { pass: false, reason: `twinlock: ${call.tool} denied: ${call.reason}` };
  if ("unbound" in binding)
    return {
      pass: false,
      reason: `twinlock: ${call.tool} denied: ${binding.unbound}. Only an admitted executor started with \`twinlock exec RUN EXECUTOR -- CMD\` may write, run commands or call MCP tools; a planner started with \`twinlock plan RUN PLANNER -- CMD\` may write its handoff folder, run read-only commands and call twinlock's MCP tools.`,
    };
  if (binding.kind === "planner") return decidePlannerCall(call, binding);
  const checkout = binding.checkout_dir as string;
  const roots = [...binding.targets, checkout];
  const base = (cwd: string | null) => cwd ?? binding.project_dir;
  if (call.kind === "write") {
    if (call.paths.length === 0) return { pass: false, reason: `twinlock: ${call.tool} names no file; denied` };
    for (const p of call.paths) {
      if (p.includes("\u0000")) return { pass: false, reason: `twinlock: ${call.tool} names a path with a NUL byte; denied` };
      if (p.startsWith("~")) return { pass: false, reason: homeRelative(call.tool, p) };
      const over = pathOverBudget(p);
      if (over !== undefined) return { pass: false, reason: `twinlock: ${call.tool} denied: ${over}` };
      const real = resolveRealPath(p, base(call.cwd));
      if (!roots.some((r) => isWithin(real, r)))
        return {
          pass: false,
          reason: `twinlock: ${call.tool} on ${shownPath(real)} denied: outside the admitted plan's targets (${binding.targets.join(", ") || "none"}) and the checkout ${checkout}`,
        };
    }
    return { pass: true };
  }
  if (call.kind === "shell") {
    if (call.cwd?.startsWith("~")) return { pass: false, reason: homeRelative(call.tool, call.cwd) };
    const over = call.cwd === null ? undefined : pathOverBudget(call.cwd);
    if (over !== undefined) return { pass: false, reason: `twinlock: ${call.tool} denied: ${over}` };
    const cwd = resolveRealPath(base(call.cwd), binding.project_dir);
    if (isWithin(cwd, binding.project_dir) || isWithin(cwd, checkout)) return { pass: true };
    return { pass: false, reason: `twinlock: ${call.tool} in ${shownPath(cwd)} denied: outside the project ${binding.project_dir}` };
  }
  return { pass: true };
}

/**
 * A planner's call (`twinlock plan`): a write only inside its handoff folder,
 * by a path whose real path is the path as written (no symbolic link on the
 * way, as for an admitted target) and with no `.git` part (a repository
 * planted there would choose what git runs); a shell call only as
 * `judgePlannerCommand` allows, inside the project or the handoff folder (in
 * the handoff folder no word of it, unquoted, may name git); MCP only
 * twinlock's own PLANNER_MCP_TOOLS;
 * nothing else outward (the web, subagents, skills).
 */
function decidePlannerCall(call: Exclude<ToolCall, { kind: "read" | "unknown" | "unreadable" }>, b: SessionBinding): HookDecision {
  const handoff = b.handoff_dir as string;
  const deny = (why: string): HookDecision => ({ pass: false, reason: `twinlock: ${call.tool} denied: ${why} (planner ${b.planner})` });
  const base = (cwd: string | null) => resolveRealPath(cwd ?? b.project_dir, "/");
  if (call.kind === "write") {
    if (call.paths.length === 0) return deny("it names no file");
    for (const p of call.paths) {
      if (p.includes("\u0000")) return deny("a path holds a NUL byte");
      if (p.startsWith("~")) return { pass: false, reason: homeRelative(call.tool, p) };
      const over = pathOverBudget(p);
      if (over !== undefined) return deny(over);
      const written = path.resolve(base(call.cwd), p);
      const real = resolveRealPath(written, "/");
      if (!isWithin(real, handoff)) return deny(`${shownPath(real)} is outside the planner's handoff folder ${handoff}`);
      if (real !== written)
        return deny(
          `${shownPath(written)} goes through a symbolic link (to ${shownPath(real)}); write the handoff folder's files by their real paths`,
        );
      if (
        path
          .relative(handoff, real)
          .split(path.sep)
          .some((part) => part.toLowerCase() === ".git")
      )
        return deny(`${shownPath(real)} is inside a .git folder, which would make the handoff folder a repository git obeys`);
    }
    return { pass: true };
  }
  if (call.kind === "shell") {
    if (call.cwd?.startsWith("~")) return { pass: false, reason: homeRelative(call.tool, call.cwd) };
    const over = call.cwd === null ? undefined : pathOverBudget(call.cwd);
    if (over !== undefined) return deny(over);
    const cwd = base(call.cwd);
    const inHandoff = isWithin(cwd, handoff);
    if (!inHandoff && !isWithin(cwd, b.project_dir)) return deny(`it runs in ${cwd}, outside the project ${b.project_dir}`);
    if (call.command === null)
      return deny("a planner's shell call must be a command line the hook can read (no PowerShell, no typing into a running command)");
    const verdict = judgePlannerCommand(call.command);
    if (!verdict.ok) return deny(`${verdict.reason}; a planner runs only read-only commands`);
    // Judged on the words the programs are given (quotes and backslashes removed: `g\it` is git), any case.
    if (inHandoff && verdict.commands.some((words) => words.some((w) => w.toLowerCase().includes("git"))))
      return deny(
        "git runs outside the handoff folder only, and no command there may name git (a repository planted there would choose what git runs)",
      );
    return { pass: true };
  }
  if (isPlannerMcpTool(call.tool)) return { pass: true };
  return deny(`a planner calls only twinlock's own MCP tools (${PLANNER_MCP_TOOLS.join(", ")} on the server named ${TWINLOCK_MCP_SERVER})`);
}

/** Whether a tool name is one of PLANNER_MCP_TOOLS on the twinlock server, as Claude Code and Codex, Gemini CLI or Cursor name it. */
export function isPlannerMcpTool(name: string): boolean {
  for (const prefix of [`mcp__${TWINLOCK_MCP_SERVER}__`, `mcp_${TWINLOCK_MCP_SERVER}_`, "MCP:"])
    if (name.startsWith(prefix) && (PLANNER_MCP_TOOLS as readonly string[]).includes(name.slice(prefix.length))) return true;
  return false;
}

/**
 * The denial of a path starting with `~`: an agent tool may expand it to a
 * home folder (Codex does), where the hook would read a folder named `~` in
 * the project.
 */
function homeRelative(tool: string, p: string): string {
  return `twinlock: ${tool} names ${JSON.stringify(p.slice(0, 120))}, which starts with ~ (a home folder to the agent tool, a folder named ~ to the hook); write the path inside the project instead; denied`;
}
