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
 * Where in `cmd` the program is that a launcher at `start` starts (`node …
 * codex.js`, `npx -y @openai/codex@0.169.0`, `bun x …`, `pnpm dlx …`), with
 * the tool any `--package` option names, and whether the launcher runs a
 * script file there (`node`, `bun run`) rather than a package; undefined
 * when `cmd[start]` is no launcher.
 */
export function launchedAt(cmd: readonly string[], start = 0): { at: number; packageTool?: AgentTool; runsScript: boolean } | undefined {
  const first = cmd[start];
  if (first === undefined) return undefined;
  const name = path.basename(first);
  const launcher = LAUNCHERS[name];
  if (!Object.hasOwn(LAUNCHERS, name) || !launcher) return undefined;
  let i = start + 1;
  let runsScript = name === "node" || name === "nodejs" || name === "bun";
  if (name === "bun" && (cmd[i] === "x" || cmd[i] === "run")) {
    runsScript = cmd[i] === "run";
    i++;
  } else if (launcher.sub) {
    if (!launcher.sub.has(cmd[i] ?? "")) return undefined;
    i++;
  }
  let packageTool: AgentTool | undefined;
  for (; i < cmd.length; i++) {
    const a = cmd[i] as string;
    if (a === "--") return { at: i + 1, packageTool, runsScript };
    if (!a.startsWith("-")) return { at: i, packageTool, runsScript };
    const eq = a.indexOf("=");
    const flag = eq === -1 ? a : a.slice(0, eq);
    const value = eq === -1 ? (launcher.valued.has(flag) ? cmd[i + 1] : undefined) : a.slice(eq + 1);
    if (launcher.packages?.has(flag)) packageTool ??= toolNamed(value);
    if (eq === -1 && launcher.valued.has(flag)) i++;
  }
  return { at: cmd.length, packageTool, runsScript };
}

/** The tools' npm packages, by their scoped names: a bare `codex` or `gemini` on npm is some other package. */
const PACKAGES: Record<string, AgentTool> = {
  "@anthropic-ai/claude-code": "claude",
  "@openai/codex": "codex",
  "@google/gemini-cli": "gemini",
};

/** The tool whose npm package `spec` names by its scoped name, at any version (`@openai/codex@0.169.0`, `npm:@google/gemini-cli`), or undefined. */
export function officialPackageTool(spec: string | undefined): AgentTool | undefined {
  if (spec === undefined) return undefined;
  const name = withoutVersion(spec.startsWith("npm:") ? spec.slice(4) : spec);
  return Object.hasOwn(PACKAGES, name) ? PACKAGES[name] : undefined;
}

/**
 * Which agent tool `cmd` names, read from its program's name
 * (`claude`, `/usr/local/bin/codex`, `gemini`, `codex-x86_64-unknown-linux-musl`,
 * `node …/bin/codex.js`, `npx -y @openai/codex@0.169.0`, `bun x`, `pnpm
 * dlx`, `yarn dlx`, `npm exec`), or undefined for any other command: what
 * the command claims to be, for the words of a refusal. What it really is
 * decides how it is confined (`identifyAgentTool`).
 */
export function agentToolOf(cmd: readonly string[]): AgentTool | undefined {
  const l = launchedAt(cmd);
  if (!l) return toolNamed(cmd[0]);
  return toolNamed(cmd[l.at]) ?? l.packageTool;
}
