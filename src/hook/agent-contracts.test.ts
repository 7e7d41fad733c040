import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AGENT_CONTRACTS, type Agent } from "./agent-contracts.js";
import { answerCall } from "./run-hook.js";

/**
 * The tools each pinned CLI offers its model (the `tools` of its first
 * request to the scripted model server in test/real-agents), and Cursor's
 * documented ones. Every call reaches the hook (the installed matchers
 * match all), so each must be judged as what it is, not as unknown.
 */
const PINNED_TOOLS: Record<Agent, string[]> = {
  // Claude Code 2.1.328 (and its deferred tools, loaded through ToolSearch).
  claude: [
    "Agent",
    "Bash",
    "Edit",
    "ListAgents",
    "Read",
    "ScheduleWakeup",
    "Skill",
    "ToolSearch",
    "Workflow",
    "Write",
    "WebFetch",
    "WebSearch",
    "NotebookEdit",
    "TaskCreate",
    "TaskUpdate",
    "TaskList",
    "TaskOutput",
    "AskUserQuestion",
  ],
  // Codex CLI 0.169.0.
  codex: [
    "exec_command",
    "write_stdin",
    "request_user_input",
    "apply_patch",
    "view_image",
    "get_goal",
    "create_goal",
    "update_goal",
    "tool_search",
    "web_search",
    "Bash",
  ],
  // Gemini CLI 0.61.0.
  gemini: [
    "update_topic",
    "list_directory",
    "read_file",
    "grep_search",
    "glob",
    "replace",
    "write_file",
    "web_fetch",
    "run_shell_command",
    "list_background_processes",
    "read_background_output",
    "google_web_search",
    "write_todos",
    "enter_plan_mode",
    "invoke_agent",
    "activate_skill",
    "save_memory",
  ],
  cursor: ["Read", "Grep", "Glob", "LS", "Write", "Edit", "StrReplace", "Delete", "Shell", "Task", "WebFetch", "WebSearch"],
};

/** The ones among them that reach outside the agent: a subagent, the web, a skill or workflow that runs tools of its own. */
const OUTWARD: Record<Agent, string[]> = {
  claude: ["Agent", "Skill", "Workflow", "WebFetch", "WebSearch", "ScheduleWakeup", "TaskOutput"],
  codex: ["web_search"],
  gemini: ["web_fetch", "google_web_search", "invoke_agent", "activate_skill"],
  cursor: ["Task", "WebFetch", "WebSearch"],
};

const options = process.env.NODE_OPTIONS;
const session = { run: process.env.TWINLOCK_RUN };
beforeEach(() => {
  delete process.env.NODE_OPTIONS;
  delete process.env.TWINLOCK_RUN;
});
afterEach(() => {
  if (options !== undefined) process.env.NODE_OPTIONS = options;
  if (session.run !== undefined) process.env.TWINLOCK_RUN = session.run;
});

describe("the hook's judgement of every tool a pinned CLI offers", () => {
  for (const agent of Object.keys(PINNED_TOOLS) as Agent[]) {
    it(`knows each of ${agent}'s tools, and holds the outward ones (${OUTWARD[agent].join(", ")}) for a bound session`, () => {
      for (const tool of PINNED_TOOLS[agent]) {
        const call = AGENT_CONTRACTS[agent].classify({ toolName: tool, toolInput: {}, cwd: "/p", eventName: null });
        expect(call.kind, tool).not.toBe("unknown");
        if (OUTWARD[agent].includes(tool)) expect(call.kind, tool).toBe("external");
      }
    });

    it(`denies a tool ${agent} may add that the hook does not know, by name, with no session asked for`, () => {
      const answer = answerCall(
        AGENT_CONTRACTS[agent],
        JSON.stringify({ tool_name: "BrandNewTool", tool_input: {}, cwd: "/p" }),
        undefined,
      );
      expect(`${answer.stdout}${answer.stderr}`).toContain('\\"BrandNewTool\\" is not a tool the twinlock hook knows; denied');
    });
  }
});
