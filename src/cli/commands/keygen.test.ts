import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { SuiteConfigSchema } from "../../suite/suite-config.js";
import { runCli, STACK_FRAME } from "../../test-support/run-cli.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-keygen-"));
  dirs.push(dir);
  return dir;
}

/** The `reviewers:` block keygen printed, as the person pastes it into twinlock.yaml. */
function pastedSnippet(stdout: string): string {
  const start = stdout.indexOf("reviewers:\n");
  return stdout.slice(start, stdout.indexOf("\n\n", start));
}

/** Names keygen accepts, with the ones YAML's core schema reads as something other than text well represented. */
const acceptedName = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._ -]{0,20}[A-Za-z0-9._-]$/),
  fc.nat().map(String),
  fc.tuple(fc.nat(), fc.nat({ max: 999 })).map(([whole, part]) => `${whole}.${part}`),
  fc.tuple(fc.nat({ max: 99 }), fc.nat({ max: 99 })).map(([m, e]) => `${m}e${e}`),
  fc.constantFrom("true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "0x1F", "0o17", "1_000"),
);

describe("twinlock keygen", () => {
  it("prints a reviewers block that twinlock.yaml accepts with the very name given, even one YAML would read as a boolean, null or number", async () => {
    for (const name of ["alice", "bad name", "true", "null", "NULL", "False", "1.0", "123", "1e3", "0x1F", "0o17", "2026-12-01"]) {
      const r = await runCli(["keygen", "--name", name, "--out", freshDir()]);
      expect(r.code, r.output).toBe(0);
      const config = SuiteConfigSchema.safeParse(parse(pastedSnippet(r.stdout)));
      expect(config.success, `${name}: ${pastedSnippet(r.stdout)}`).toBe(true);
      expect(config.data?.reviewers?.[0]?.name).toBe(name);
    }
  });

  it("keeps a name plain in the block when YAML reads it as that text (the README's alice)", async () => {
    const r = await runCli(["keygen", "--name", "alice", "--out", freshDir()]);
    expect(pastedSnippet(r.stdout)).toContain("\n  - name: alice\n");
  });

  it("round-trips any name it accepts through the pasted YAML (property)", async () => {
    const out = freshDir();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(acceptedName, async (name) => {
        const r = await runCli(["keygen", "--name", name, "--out", path.join(out, String(n++))]);
        expect(r.code, r.output).toBe(0);
        expect(parse(pastedSnippet(r.stdout)).reviewers[0].name).toBe(name);
      }),
      { numRuns: 40 },
    );
  });

  it("refuses a name with a letter outside ASCII in one line that says why and what to write, and writes nothing", async () => {
    const out = freshDir();
    const r = await runCli(["keygen", "--name", "Ana María", "--out", out]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(
      /must start with an ASCII letter or digit and hold only ASCII letters.*look-alike letters.*--name "Ana Maria"/,
    );
    expect(r.output).not.toMatch(STACK_FRAME);
    expect(readdirSync(out)).toEqual([]);
  });
});
