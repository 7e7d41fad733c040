import path from "node:path";

/**
 * The agent tools `exec` and `plan` run in their sandbox without being
 * asked: Codex and Gemini let a call through when the hook fails (issue 24);
 * Claude Code's hook judges a shell command but cannot see what it writes.
 */
export type AgentTool = "claude" | "codex" | "gemini";

/**
 * Launchers that run a package's program or a script named by a later
 * argument: the subcommand they need first (`bun x`, `pnpm dlx`), if any,
 * and their options that take a value as the next argument (`node -r
 * x.cjs codex.js`). `bun` without `x` runs a script as `node` does.
 */
const LAUNCHERS: Record<string, { sub?: ReadonlySet<string>; valued: ReadonlySet<string>; packages?: ReadonlySet<string> }> = {
  node: { valued: new Set(["-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--title"]) },
  nodejs: { valued: new Set(["-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--title"]) },
  bun: { valued: new Set(["-r", "--preload", "--cwd", "-c", "--config", "-p", "--package"]), packages: new Set(["-p", "--package"]) },
  npx: { valued: new Set(["-p", "--package", "-c", "--call", "--registry", "--cache"]), packages: new Set(["-p", "--package"]) },
  pnpx: { valued: new Set(["-p", "--package", "-c", "--call", "--registry", "--cache"]), packages: new Set(["-p", "--package"]) },
  bunx: { valued: new Set(["-p", "--package", "--cwd"]), packages: new Set(["-p", "--package"]) },
  npm: {
    sub: new Set(["exec", "x"]),
    valued: new Set(["-p", "--package", "-c", "--call", "--registry", "--cache", "-w", "--workspace"]),
    packages: new Set(["-p", "--package"]),
  },
  pnpm: { sub: new Set(["dlx", "exec"]), valued: new Set(["--package", "-C", "--dir"]), packages: new Set(["--package"]) },
  yarn: { sub: new Set(["dlx", "exec"]), valued: new Set(["-p", "--package"]), packages: new Set(["-p", "--package"]) },
};

/** The package names and program names each tool is started by. */
const NAMES: Record<string, AgentTool> = {
  claude: "claude",
  "claude.exe": "claude",
  "@anthropic-ai/claude-code": "claude",
  codex: "codex",
  "@openai/codex": "codex",
  gemini: "gemini",
  "@google/gemini-cli": "gemini",
};

/** A package spec without its version or tag: `@openai/codex@0.169.0` is `@openai/codex`, `gemini@latest` is `gemini`. */
function withoutVersion(arg: string): string {
  const at = arg.lastIndexOf("@");
  return at > 0 && !arg.slice(at).includes("/") ? arg.slice(0, at) : arg;
}

/** The tool `arg` names as a program, package or script, or undefined. */
function toolNamed(arg: string | undefined): AgentTool | undefined {
  if (arg === undefined) return undefined;
  const spec = withoutVersion(arg.startsWith("npm:") ? arg.slice(4) : arg);
  if (Object.hasOwn(NAMES, spec)) return NAMES[spec];
  const base = path.basename(spec).replace(/\.(c|m)?js$/, "");
  if (Object.hasOwn(NAMES, base)) return NAMES[base];
  // A script inside the package: …/node_modules/@google/gemini-cli/dist/index.js.
  const parts = spec.split("/");
  for (let j = 0; j + 2 < parts.length; j++) {
    const scoped = `${parts[j]}/${parts[j + 1]}`;
    if (parts[j]?.startsWith("@") && Object.hasOwn(NAMES, scoped)) return NAMES[scoped];
  }
  // Claude Code's package script (…/@anthropic-ai/claude-code/cli.js) is caught above; its release binaries are named claude.
  // Codex's release binaries: codex-x86_64-unknown-linux-musl, codex-aarch64-unknown-linux-gnu, …
  if (/^codex-(x86_64|aarch64|arm64|amd64)-[a-z0-9_-]+$/.test(base)) return "codex";
  return undefined;
}

/**
 * Where in `cmd` the program is that a launcher starts (`node … codex.js`,
 * `npx -y @openai/codex@0.169.0`, `bun x …`, `pnpm dlx …`), with the tool
 * any `--package` option names; undefined when `cmd` starts no launcher.
 */
function launched(cmd: readonly string[]): { at: number; packageTool?: AgentTool } | undefined {
  const first = cmd[0];
  if (first === undefined) return undefined;
  const launcher = LAUNCHERS[path.basename(first)];
  if (!Object.hasOwn(LAUNCHERS, path.basename(first)) || !launcher) return undefined;
  let i = 1;
  if (path.basename(first) === "bun" && (cmd[1] === "x" || cmd[1] === "run")) i = 2;
  else if (launcher.sub) {
    if (!launcher.sub.has(cmd[1] ?? "")) return undefined;
    i = 2;
  }
  let packageTool: AgentTool | undefined;
  for (; i < cmd.length; i++) {
    const a = cmd[i] as string;
    if (a === "--") return { at: i + 1, packageTool };
    if (!a.startsWith("-")) return { at: i, packageTool };
    const eq = a.indexOf("=");
    const flag = eq === -1 ? a : a.slice(0, eq);
    const value = eq === -1 ? (launcher.valued.has(flag) ? cmd[i + 1] : undefined) : a.slice(eq + 1);
    if (launcher.packages?.has(flag)) packageTool ??= toolNamed(value);
    if (eq === -1 && launcher.valued.has(flag)) i++;
  }
  return { at: cmd.length, packageTool };
}

/**
 * Which agent tool `cmd` starts, read from its program's name
 * (`claude`, `/usr/local/bin/codex`, `gemini`, `codex-x86_64-unknown-linux-musl`,
 * `node …/bin/codex.js`, `npx -y @openai/codex@0.169.0`, `bun x`, `pnpm
 * dlx`, `yarn dlx`, `npm exec`), or undefined for any other command. A
 * wrapper (a script, `env codex`) is not seen through: pass
 * `twinlock exec --sandbox` for it.
 */
export function agentToolOf(cmd: readonly string[]): AgentTool | undefined {
  const l = launched(cmd);
  if (!l) return toolNamed(cmd[0]);
  return toolNamed(cmd[l.at]) ?? l.packageTool;
}

/** Where in `cmd` the tool's own arguments begin: after the program, or after the launcher's program argument. */
export function toolArgumentsAt(cmd: readonly string[]): number {
  const l = launched(cmd);
  return l ? Math.min(l.at + 1, cmd.length) : 1;
}
