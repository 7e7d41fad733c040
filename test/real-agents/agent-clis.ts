import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "../support/ensure-built.js";
import { anthropicMessages, anthropicToolResults } from "./anthropic-messages.js";
import { geminiFunctionResponses, geminiGenerateContent } from "./gemini-generate-content.js";
import type { Responder } from "./model-server.js";
import { codexToolOutputs, openaiResponses } from "./openai-responses.js";
import type { ScriptedAction } from "./scripted-action.js";

/** The folder scripts/install-agent-clis.sh installs the pinned CLIs into. */
export const AGENT_CLIS_DIR = process.env.TWINLOCK_AGENT_CLIS ?? path.join(REPO_ROOT, ".agent-clis");

/** The versions scripts/install-agent-clis.sh pins (kept equal to it). */
export const PINNED = { claude: "2.1.328", codex: "0.169.0", gemini: "0.61.0" } as const;

/** The three agent tools with a headless CLI this suite drives (Cursor has none). */
export type RealAgent = keyof typeof PINNED;
export const REAL_AGENTS: RealAgent[] = ["claude", "codex", "gemini"];

/** Where a run of one CLI lives: its project (the cwd), the HOME it sees, and the scripted model's URL. */
export interface RunDirs {
  project: string;
  home: string;
  modelUrl: string;
  /** twinlock's stdio MCP server, to register under the name `twinlock` (the planner's freeze), or none. */
  mcp?: { command: string; args: string[] };
}

/** Claude Code's `--mcp-config` for twinlock's server, and the one MCP tool its `--allowedTools` lets run unasked. */
function claudeMcp(dirs: RunDirs): string[] {
  if (!dirs.mcp) return [];
  return ["--mcp-config", JSON.stringify({ mcpServers: { twinlock: { type: "stdio", ...dirs.mcp } } }), "--strict-mcp-config"];
}

/** One agent CLI as this suite drives it: its binary, its scripted protocol, and how it is set up and started headless. */
export interface AgentCli {
  agent: RealAgent;
  bin: string;
  /** The hook config `hooks install --project` writes, relative to the project. */
  hookConfig: string;
  responder(action: ScriptedAction): Responder;
  /** The tool results the CLI sent back to the model (where a hook's deny reason shows). */
  toolResults(bodies: unknown[]): string[];
  /** Writes the CLI's own user config under `dirs.home` (model server, trust, no telemetry or updates). */
  configure(dirs: RunDirs): void;
  /**
   * argv and extra environment for one headless run with `prompt`. `trustHooks`: run the project's hooks as a
   * user who reviewed them would (Codex: `--dangerously-bypass-hook-trust`, standing in for the `/hooks`
   * review's trusted_hash); the others have no per-hook trust.
   */
  command(dirs: RunDirs, prompt: string, trustHooks: boolean): { args: string[]; env: Record<string, string> };
}

const bin = (name: string) => path.join(AGENT_CLIS_DIR, "node_modules", ".bin", name);

/** Environment every CLI gets: no telemetry, no update check, no error reporting (nothing leaves loopback anyway). */
const QUIET = { DO_NOT_TRACK: "1", NO_UPDATE_NOTIFIER: "1", CI: "1" };

export const AGENT_CLIS: Record<RealAgent, AgentCli> = {
  claude: {
    agent: "claude",
    bin: bin("claude"),
    hookConfig: ".claude/settings.json",
    responder: anthropicMessages,
    toolResults: anthropicToolResults,
    configure: () => {},
    command: (dirs, prompt) => ({
      // acceptEdits lets Write/Edit run unasked and --allowedTools the Bash call; the PreToolUse hook runs before either.
      args: [
        "-p",
        prompt,
        "--output-format",
        "json",
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        dirs.mcp ? "Write,Edit,Bash,mcp__twinlock__twinlock_submit_handoff" : "Write,Edit,Bash",
        "--model",
        "claude-sonnet-4-5",
        ...claudeMcp(dirs),
      ],
      env: {
        ...QUIET,
        ANTHROPIC_BASE_URL: dirs.modelUrl,
        ANTHROPIC_API_KEY: "sk-ant-scripted-dummy",
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_ERROR_REPORTING: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        // MCP tools offered to the model by name, not deferred behind ToolSearch: the scripted model calls twinlock's directly.
        ...(dirs.mcp ? { ENABLE_TOOL_SEARCH: "false" } : {}),
      },
    }),
  },
  codex: {
    agent: "codex",
    bin: bin("codex"),
    hookConfig: ".codex/hooks.json",
    responder: openaiResponses,
    toolResults: codexToolOutputs,
    configure: (dirs) => {
      const codexHome = path.join(dirs.home, ".codex");
      writeFileSync(
        path.join(codexHome, "config.toml"),
        [
          'model = "gpt-5.5"',
          'model_provider = "scripted"',
          'approval_policy = "never"',
          'sandbox_mode = "danger-full-access"',
          "check_for_update_on_startup = false",
          "",
          "[model_providers.scripted]",
          'name = "scripted"',
          `base_url = "${dirs.modelUrl}/v1"`,
          'wire_api = "responses"',
          'env_key = "SCRIPTED_API_KEY"',
          "request_max_retries = 0",
          "stream_max_retries = 0",
          "",
          "[analytics]",
          "enabled = false",
          "",
          "[feedback]",
          "enabled = false",
          "",
          // The project is trusted (as a user who runs Codex there has said): project config and hooks load only then.
          `[projects."${dirs.project}"]`,
          'trust_level = "trusted"',
          "",
          ...(dirs.mcp
            ? ["[mcp_servers.twinlock]", `command = ${JSON.stringify(dirs.mcp.command)}`, `args = ${JSON.stringify(dirs.mcp.args)}`, ""]
            : []),
        ].join("\n"),
      );
    },
    command: (dirs, prompt, trustHooks) => ({
      args: [
        "exec",
        "--skip-git-repo-check",
        "--json",
        "-C",
        dirs.project,
        ...(trustHooks ? ["--dangerously-bypass-hook-trust"] : []),
        prompt,
      ],
      env: { ...QUIET, CODEX_HOME: path.join(dirs.home, ".codex"), SCRIPTED_API_KEY: "sk-scripted-dummy" },
    }),
  },
  gemini: {
    agent: "gemini",
    bin: bin("gemini"),
    hookConfig: ".gemini/settings.json",
    responder: geminiGenerateContent,
    toolResults: geminiFunctionResponses,
    configure: (dirs) => {
      writeFileSync(
        path.join(dirs.home, ".gemini", "settings.json"),
        `${JSON.stringify(
          {
            general: { disableAutoUpdate: true, disableUpdateNag: true },
            privacy: { usageStatisticsEnabled: false },
            telemetry: { enabled: false },
            security: { auth: { selectedType: "gemini-api-key" } },
            ...(dirs.mcp ? { mcpServers: { twinlock: { ...dirs.mcp, trust: true } } } : {}),
          },
          null,
          2,
        )}\n`,
      );
    },
    command: (dirs, prompt) => ({
      args: ["-p", prompt, "--output-format", "json", "--approval-mode", "yolo", "-m", "gemini-2.5-flash"],
      env: {
        ...QUIET,
        GEMINI_API_KEY: "scripted-dummy-key",
        GOOGLE_GEMINI_BASE_URL: dirs.modelUrl,
        // The project is trusted (as a user who runs Gemini there has said): project settings and hooks load only then.
        GEMINI_CLI_TRUST_WORKSPACE: "true",
      },
    }),
  },
};

/** Why the suite cannot run a CLI here, or undefined when its pinned binary is installed. */
export function missingCli(agent: RealAgent): string | undefined {
  const cli = AGENT_CLIS[agent];
  if (!existsSync(cli.bin)) return `${cli.bin} is not installed; run scripts/install-agent-clis.sh`;
  return undefined;
}
