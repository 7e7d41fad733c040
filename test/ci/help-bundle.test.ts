import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/test-support/run-cli.js";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../support/ensure-built.js";

/**
 * `twinlock`, `--help`, `help [COMMAND]` and `--version` are answered from
 * dist/twinlock-help.cjs, the same CLI built without its command modules.
 * What a person sees must not depend on which bundle answered. The whole
 * CLI answers in this process (`main`, whose output the one-file build
 * prints as it is); the help bundle and the installed command as processes.
 */
const HELP = path.join(REPO_ROOT, "dist", "twinlock-help.cjs");
/** The help calls the installed command is asked too: one of each form it sends to the help bundle. */
const INSTALLED_FORMS = new Set(["[]", '["--help"]', '["help","admit"]', '["--version"]']);

const columns = process.env.COLUMNS;
afterAll(() => {
  if (columns === undefined) delete process.env.COLUMNS;
  else process.env.COLUMNS = columns;
});

/** What the whole CLI answers `args` with, as a process would show it (the width as `run` gives its processes). */
async function whole(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  process.env.COLUMNS = "100";
  const r = await runCli(args);
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

/** The status and output of `node file ...args`; the calls a case compares run side by side. */
function run(file: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], { env: { ...process.env, COLUMNS: "100" }, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.on("error", reject);
    child.on("close", (status) =>
      resolve({ status, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }),
    );
  });
}

beforeAll(async () => {
  await ensureBuilt();
}, 240_000);

describe("the help bundle", () => {
  it.each([
    [[]],
    [["--help"]],
    [["-h"]],
    [["help"]],
    [["help", "admit"]],
    [["help", "trust"]],
    [["help", "nosuch"]],
    [["--version"]],
    [["-V"]],
    [["--help", "--json"]],
  ])("answers %j exactly as the whole CLI does, and so does the installed command", async (args) => {
    const asInstalled = INSTALLED_FORMS.has(JSON.stringify(args));
    const [help, installed] = await Promise.all([run(HELP, args), asInstalled ? run(DIST_BIN, args) : undefined]);
    const expected = await whole(args);
    expect(expected.stdout + expected.stderr).not.toBe("");
    expect(help).toEqual(expected);
    if (installed) expect(installed).toEqual(expected);
  });

  it("holds no command: a command reaching it fails loudly instead of half-running", async () => {
    const r = await run(HELP, ["validate", "--suite", path.join(REPO_ROOT, "examples", "suite")]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/help bundle has no \.\/commands\/validate\.js/);
  });

  it("is not what runs a command through the installed command", async () => {
    const r = await run(DIST_BIN, ["validate", "--suite", path.join(REPO_ROOT, "examples", "suite")]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^prompts +\d+/m);
  });
});
