import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { type AgentTool, launchedAt, officialPackageTool } from "./agent-tool.js";
import { SCRIPT_RUNTIMES } from "./script-runtimes.js";

/** What `exec` (or `plan`) found the command's program to be. */
export interface ProgramIdentity {
  /** The agent tool it really is, or undefined when it is none twinlock can tell. */
  tool: AgentTool | undefined;
  /** Where in the command the tool's own arguments begin (Codex's `-c sandbox_mode=…` goes there). */
  argsAt: number;
  /** The program as found, in words, for the line that refuses it ("a shell script run by /bin/sh: /x/bin/claude"). */
  what: string;
}

/** How many bytes of a program are read to tell what it is: Linux reads no more of a `#!` line either. */
export const PROGRAM_HEAD_BYTES = 256;

/** The real paths of the tools' release binaries: Codex's by target triple, Claude Code's native installer's versions. */
const RELEASE_BINARY: Array<[RegExp, AgentTool]> = [
  [/^codex-(x86_64|aarch64|arm64|amd64)-[a-z0-9_-]+$/, "codex"],
  [/^(codex)$/, "codex"],
  [/^(claude|claude\.exe)$/, "claude"],
];

/** Claude Code's native installer keeps each release as `…/claude/versions/2.1.328`, started through a link named claude. */
const CLAUDE_VERSION = /\/claude\/versions\/[0-9]+\.[0-9]+\.[0-9]+[^/]*$/;

/**
 * Which agent tool `cmd` really starts, found without running anything: the
 * program looked up on PATH (as `execvp` does), its links followed
 * (`realpath`), and its first PROGRAM_HEAD_BYTES bytes read. An ELF binary
 * is the tool its real path names (Codex's `codex-x86_64-unknown-linux-musl`,
 * Claude Code's `claude`, a binary inside the tool's npm package); a `#!`
 * script run by node (or bun), itself an ELF binary, is the tool whose npm
 * package (`…/node_modules/@openai/codex/…`) holds the script's real path;
 * `node SCRIPT` the same; `env [NAME=VALUE…] CMD` is CMD; a package runner
 * (`npx`, `bunx`, `pnpm dlx`, …) is the tool whose package it names by its
 * scoped npm name (`@openai/codex`, `@google/gemini-cli`,
 * `@anthropic-ai/claude-code`: a bare `codex` or `gemini` is whatever
 * package has that name). Anything else (a shell script named `claude`, a
 * link `codex -> /bin/sh`, a node script outside the package) is no tool.
 * A copy of another binary under a tool's name is not seen through: a
 * binary's first bytes do not say which program it is.
 */
export function identifyAgentTool(cmd: readonly string[], where: { env: NodeJS.ProcessEnv; cwd: string }): ProgramIdentity {
  // Without PATH, execvp searches its default.
  return identifyFrom(cmd, 0, where.env.PATH ?? "/usr/bin:/bin", where.cwd);
}

function identifyFrom(cmd: readonly string[], at: number, searchPath: string, cwd: string): ProgramIdentity {
  const name = cmd[at];
  const none = (what: string): ProgramIdentity => ({ tool: undefined, argsAt: at + 1, what });
  if (name === undefined || name === "") return none("no program");
  const found = findProgram(name, searchPath, cwd);
  if (typeof found === "string") return none(found);
  const base = path.basename(name);
  if (base === "env") {
    if (found.kind !== "elf") return none(`${describe(found)}, not the env program`);
    return throughEnv(cmd, at, searchPath, cwd);
  }
  const launcher = launchedAt(cmd, at);
  if (launcher) {
    if (!launcher.runsScript) {
      const tool = launcher.packageTool ?? officialPackageTool(cmd[launcher.at]);
      return tool
        ? { tool, argsAt: Math.min(launcher.at + 1, cmd.length), what: `${base} starting ${tool}'s package` }
        : none(
            `${[base, cmd[launcher.at]].filter((p) => p !== undefined).join(" ")}, a package runner starting no tool's package by its npm name`,
          );
    }
    if (found.kind !== "elf") return none(`${describe(found)}, not the ${base} program`);
    if (cmd[launcher.at] === undefined) return none(`${base} running no script`);
    // `node [options] SCRIPT`: the script, as the path is resolved against the working folder (never PATH).
    const script = realOr(path.resolve(cwd, cmd[launcher.at] as string));
    const tool2 = script ? packageToolOf(script) : undefined;
    return tool2
      ? { tool: tool2, argsAt: launcher.at + 1, what: `${base} running ${script}` }
      : {
          tool: undefined,
          argsAt: launcher.at + 1,
          what: `${base} running ${script ?? cmd[launcher.at]}, a script in no tool's npm package`,
        };
  }
  if (found.kind === "elf") {
    const tool = binaryToolOf(found.real);
    return tool ? { tool, argsAt: at + 1, what: `${tool}'s binary ${found.real}` } : none(describe(found));
  }
  if (found.kind === "script") {
    const runner = found.interpreter;
    if (!runner || !SCRIPT_RUNTIMES.has(path.basename(runner.name))) return none(describe(found));
    const interpreter = findProgram(runner.name, runner.viaEnv ? searchPath : "", cwd);
    if (typeof interpreter === "string" || interpreter.kind !== "elf")
      return none(`a script run by ${runner.name}, which is ${typeof interpreter === "string" ? interpreter : describe(interpreter)}`);
    const tool = packageToolOf(found.real);
    return tool
      ? { tool, argsAt: at + 1, what: `${tool}'s script ${found.real}` }
      : none(`a ${path.basename(runner.name)} script in no tool's npm package: ${found.real}`);
  }
  return none(describe(found));
}

/** `env [-i] [-u NAME]… [NAME=VALUE]… [--] CMD…`: CMD, found on the PATH env gives it. Other options (`-S`, `-C`) are not followed. */
function throughEnv(cmd: readonly string[], at: number, searchPath: string, cwd: string): ProgramIdentity {
  let pathNow = searchPath;
  for (let i = at + 1; i < cmd.length; i++) {
    const a = cmd[i] as string;
    if (a === "--") return identifyFrom(cmd, i + 1, pathNow, cwd);
    if (a === "-i" || a === "--ignore-environment" || a === "-") {
      pathNow = "";
      continue;
    }
    if (a === "-u" || a === "--unset") {
      if (cmd[i + 1] === "PATH") pathNow = "";
      i++;
      continue;
    }
    if (a.startsWith("--unset=")) {
      if (a === "--unset=PATH") pathNow = "";
      continue;
    }
    if (a.startsWith("-")) return { tool: undefined, argsAt: i + 1, what: `env with ${a}, which twinlock does not follow` };
    const eq = a.indexOf("=");
    if (eq > 0) {
      if (a.slice(0, eq) === "PATH") pathNow = a.slice(eq + 1);
      continue;
    }
    return identifyFrom(cmd, i, pathNow, cwd);
  }
  return { tool: undefined, argsAt: cmd.length, what: "env starting no program" };
}

/** A program found: its real path and what its first bytes say it is. */
type Found = { real: string } & (
  | { kind: "elf" }
  | { kind: "script"; interpreter: { name: string; viaEnv: boolean } | undefined; line: string }
  | { kind: "other" }
);

/** `name` looked up as `execvp` does (a name with a slash as it is, else each PATH entry; an empty entry is the working folder), or why not. */
function findProgram(name: string, searchPath: string, cwd: string): Found | string {
  const candidates = name.includes("/")
    ? [path.resolve(cwd, name)]
    : searchPath.split(path.delimiter).map((d) => path.resolve(cwd, d === "" ? "." : d, name));
  for (const c of candidates) {
    const real = realOr(c);
    if (real === undefined) continue;
    try {
      const st = statSync(real);
      if (!st.isFile() || (st.mode & 0o111) === 0) continue;
    } catch {
      continue;
    }
    const head = readFileHead(real);
    if (head === undefined) continue;
    return { real, ...kindOf(head) };
  }
  return name.includes("/") ? `${name}, which is no executable file` : `${name}, which is not an executable file on PATH`;
}

/**
 * The first `bytes` bytes of a regular file (default PROGRAM_HEAD_BYTES),
 * opened without blocking (a FIFO) and without following a link; undefined
 * for anything else or on any failure.
 */
export function readFileHead(file: string, bytes = PROGRAM_HEAD_BYTES): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(bytes);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, n);
      if (got === 0) break;
      n += got;
    }
    return buf.subarray(0, n);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** What a program's first bytes say: an ELF binary, a `#!` script and its interpreter, or neither. */
function kindOf(
  head: Buffer,
): { kind: "elf" } | { kind: "script"; interpreter: { name: string; viaEnv: boolean } | undefined; line: string } | { kind: "other" } {
  if (head.length >= 4 && head[0] === 0x7f && head.subarray(1, 4).toString("latin1") === "ELF") return { kind: "elf" };
  if (head.length < 2 || head[0] !== 0x23 || head[1] !== 0x21) return { kind: "other" };
  const end = head.indexOf(0x0a);
  // A #! line longer than what was read cannot be judged.
  if (end === -1 && head.length === PROGRAM_HEAD_BYTES)
    return { kind: "script", interpreter: undefined, line: "a #! line longer than 256 bytes" };
  const line = head
    .subarray(2, end === -1 ? head.length : end)
    .toString("latin1")
    .trim();
  // Linux splits the line once: the interpreter, then the rest as one argument.
  const parts = line.split(/[ \t]+/).filter((p) => p !== "");
  const interp = parts[0];
  if (interp === undefined) return { kind: "script", interpreter: undefined, line };
  if (path.basename(interp) !== "env") return { kind: "script", interpreter: { name: interp, viaEnv: false }, line };
  // `#!/usr/bin/env node`, `#!/usr/bin/env -S node --flags`: the first word that is no option or assignment.
  const program = parts.slice(1).find((p) => !p.startsWith("-") && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(p));
  return { kind: "script", interpreter: program ? { name: program, viaEnv: true } : undefined, line };
}

/** The program found, in words. */
function describe(found: Found): string {
  if (found.kind === "elf") return `the binary ${found.real}, which is no tool's`;
  if (found.kind === "other") return `${found.real}, neither an ELF binary nor a #! script`;
  return found.interpreter
    ? `a script run by ${found.interpreter.name}: ${found.real}`
    : `a script whose interpreter twinlock cannot tell (#!${found.line}): ${found.real}`;
}

/** The tool a binary's real path names: a release binary's own name, or a binary inside the tool's npm package. */
function binaryToolOf(real: string): AgentTool | undefined {
  if (CLAUDE_VERSION.test(real)) return "claude";
  const base = path.basename(real);
  for (const [re, tool] of RELEASE_BINARY) if (re.test(base)) return tool;
  return packageToolOf(real);
}

/** The tool whose npm package (`…/node_modules/@openai/codex/…`, or a platform package `@openai/codex-linux-x64`) holds `real`. */
function packageToolOf(real: string): AgentTool | undefined {
  const parts = real.split("/");
  for (let j = parts.length - 3; j >= 0; j--) {
    if (parts[j] !== "node_modules") continue;
    const scope = parts[j + 1];
    const name = parts[j + 2];
    if (scope === undefined || name === undefined) continue;
    const tool =
      officialPackageTool(`${scope}/${name}`) ?? officialPackageTool(`${scope}/${name.replace(/-(linux|darwin|win32)-[a-z0-9-]+$/, "")}`);
    if (tool) return tool;
  }
  return undefined;
}

function realOr(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}
