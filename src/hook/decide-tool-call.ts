import type { SessionBinding } from "../home/session-binding.js";
import { isWithin, resolveRealPath } from "../input/resolve-real-path.js";
import type { ToolCall } from "./tool-call.js";

/** The hook's decision: pass (say nothing that overrides the user's rules) or deny, with why. */
export type HookDecision = { pass: true } | { pass: false; reason: string };

/**
 * Decide one tool call (SPEC §11). Reads pass. Unknown tools are denied.
 * Everything else needs a verified binding; then a write must name only
 * paths inside the admitted actions' targets or the checkout (after `..`
 * and symbolic links are resolved), a shell call must run inside the
 * project or the checkout, and MCP and other outward calls pass on the
 * binding alone (they cannot be scoped by path).
 */
export function decideToolCall(call: ToolCall, binding: SessionBinding | { unbound: string }): HookDecision {
  if (call.kind === "read") return { pass: true };
  if (call.kind === "unknown")
    return { pass: false, reason: `twinlock: ${JSON.stringify(call.tool)} is not a tool the twinlock hook knows; denied` };
  if (call.kind === "unreadable") return { pass: false, reason: `twinlock: ${call.tool} denied: ${call.reason}` };
  if ("unbound" in binding)
    return {
      pass: false,
      reason: `twinlock: ${call.tool} denied: ${binding.unbound}. Only an admitted executor started with \`twinlock exec RUN EXECUTOR -- CMD\` may write, run commands or call MCP tools.`,
    };
  const roots = [...binding.targets, binding.checkout_dir];
  const base = (cwd: string | null) => cwd ?? binding.project_dir;
  if (call.kind === "write") {
    if (call.paths.length === 0) return { pass: false, reason: `twinlock: ${call.tool} names no file; denied` };
    for (const p of call.paths) {
      if (p.includes("\u0000")) return { pass: false, reason: `twinlock: ${call.tool} names a path with a NUL byte; denied` };
      if (p.startsWith("~")) return { pass: false, reason: homeRelative(call.tool, p) };
      const real = resolveRealPath(p, base(call.cwd));
      if (!roots.some((r) => isWithin(real, r)))
        return {
          pass: false,
          reason: `twinlock: ${call.tool} on ${real} denied: outside the admitted plan's targets (${binding.targets.join(", ") || "none"}) and the checkout ${binding.checkout_dir}`,
        };
    }
    return { pass: true };
  }
  if (call.kind === "shell") {
    if (call.cwd?.startsWith("~")) return { pass: false, reason: homeRelative(call.tool, call.cwd) };
    const cwd = resolveRealPath(base(call.cwd), binding.project_dir);
    if (isWithin(cwd, binding.project_dir) || isWithin(cwd, binding.checkout_dir)) return { pass: true };
    return { pass: false, reason: `twinlock: ${call.tool} in ${cwd} denied: outside the project ${binding.project_dir}` };
  }
  return { pass: true };
}

/**
 * The denial of a path starting with `~`: an agent tool may expand it to a
 * home folder (Codex does), where the hook would read a folder named `~` in
 * the project.
 */
function homeRelative(tool: string, p: string): string {
  return `twinlock: ${tool} names ${JSON.stringify(p.slice(0, 120))}, which starts with ~ (a home folder to the agent tool, a folder named ~ to the hook); write the path inside the project instead; denied`;
}
