import path from "node:path";

/** The agent tools whose failing hook lets a call through (issue 24), so that `exec` runs them in its sandbox. */
export type FailOpenTool = "codex" | "gemini";

/** Launchers that run a package's program named by their next argument (`node codex.js`, `npx @openai/codex`). */
const LAUNCHERS = new Set(["node", "nodejs", "npx", "bunx", "pnpx", "bun"]);

/** The package names and program names each tool is started by. */
const NAMES: Record<string, FailOpenTool> = {
  codex: "codex",
  "@openai/codex": "codex",
  gemini: "gemini",
  "@google/gemini-cli": "gemini",
};

/**
 * Which fail-open tool `cmd` starts, read from its program's name
 * (`/usr/local/bin/codex`, `gemini`, `node …/bin/codex.js`, `npx
 * @openai/codex`), or undefined for any other command. A wrapper (a script,
 * `env codex`) is not seen through: pass `twinlock exec --sandbox` for it.
 */
export function failOpenToolOf(cmd: readonly string[]): FailOpenTool | undefined {
  const name = (arg: string | undefined) => {
    if (arg === undefined) return undefined;
    if (Object.hasOwn(NAMES, arg)) return NAMES[arg];
    const base = path.basename(arg).replace(/\.(c|m)?js$/, "");
    return Object.hasOwn(NAMES, base) ? NAMES[base] : undefined;
  };
  const first = cmd[0];
  if (first === undefined) return undefined;
  if (!LAUNCHERS.has(path.basename(first))) return name(first);
  // The launcher's first argument that is not an option is the program it starts.
  return name(cmd.slice(1).find((a) => !a.startsWith("-")));
}

/** Where in `cmd` the tool's own arguments begin: after the program, or after the launcher's program argument. */
export function toolArgumentsAt(cmd: readonly string[]): number {
  const first = cmd[0];
  if (first === undefined || !LAUNCHERS.has(path.basename(first))) return 1;
  const program = cmd.findIndex((a, i) => i > 0 && !a.startsWith("-"));
  return program === -1 ? cmd.length : program + 1;
}
