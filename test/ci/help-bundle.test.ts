import { spawn } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../support/ensure-built.js";

/**
 * `twinlock`, `--help`, `help [COMMAND]` and `--version` are answered from
 * dist/twinlock-help.cjs, the same CLI built without its command modules.
 * What a person sees must not depend on which bundle answered.
 */
const FULL = path.join(REPO_ROOT, "dist", "twinlock.cjs");
const HELP = path.join(REPO_ROOT, "dist", "twinlock-help.cjs");

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
  ])("answers %j exactly as the whole CLI does, through the installed command too", async (args) => {
    const [whole, help, installed] = await Promise.all([run(FULL, args), run(HELP, args), run(DIST_BIN, args)]);
    expect(whole.stdout + whole.stderr).not.toBe("");
    expect(help).toEqual(whole);
    expect(installed).toEqual(whole);
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
