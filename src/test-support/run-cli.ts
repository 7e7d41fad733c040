import { main } from "../cli/main.js";

/** What one in-process CLI run printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr together, for "no stack trace anywhere" checks. */
  output: string;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI colour codes is the point
const ANSI = /\u001b\[[0-9;]*m/g;

/** Run `twinlock <argv>` in this process with captured output (colour codes stripped). */
export async function runCli(argv: string[]): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
  });
  stdout = stdout.replace(ANSI, "");
  stderr = stderr.replace(ANSI, "");
  return { code, stdout, stderr, output: stdout + stderr };
}

/** Run `twinlock <argv> --json` and parse the one JSON document it prints. */
export async function runCliJson<T = Record<string, unknown>>(argv: string[]): Promise<CliRun & { json: T }> {
  const run = await runCli([...argv, "--json"]);
  return { ...run, json: JSON.parse(run.stdout) as T };
}

/** A Node stack frame line, which no output for bad input may contain. */
export const STACK_FRAME = /^\s{4}at /m;
