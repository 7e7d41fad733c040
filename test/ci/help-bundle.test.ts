import { spawnSync } from "node:child_process";
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

function run(file: string, args: string[]) {
  const r = spawnSync(process.execPath, [file, ...args], { encoding: "utf8", env: { ...process.env, COLUMNS: "100" } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
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
  ])("answers %j exactly as the whole CLI does, through the installed command too", (args) => {
    const whole = run(FULL, args);
    expect(whole.stdout + whole.stderr).not.toBe("");
    expect(run(HELP, args)).toEqual(whole);
    expect(run(DIST_BIN, args)).toEqual(whole);
  });

  it("holds no command: a command reaching it fails loudly instead of half-running", () => {
    const r = run(HELP, ["validate", "--suite", path.join(REPO_ROOT, "examples", "suite")]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/help bundle has no \.\/commands\/validate\.js/);
  });

  it("is not what runs a command through the installed command", () => {
    const r = run(DIST_BIN, ["validate", "--suite", path.join(REPO_ROOT, "examples", "suite")]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^prompts +\d+/m);
  });
});
