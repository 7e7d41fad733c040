import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { parseSuiteConfig } from "../../suite/load-suite.js";
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

/** The reviewer's name as twinlock reads a twinlock.yaml holding the pasted block, or the config's problems. */
function nameTwinlockReads(stdout: string): unknown {
  const { config, diagnostics } = parseSuiteConfig(`suite_id: keygen-test\n${pastedSnippet(stdout)}\n`);
  return diagnostics.length > 0 ? diagnostics.map((d) => d.message) : config.reviewers?.[0]?.name;
}

const hasPyYaml = spawnSync("python3", ["-c", "import yaml"]).status === 0;

/** The names PyYAML (YAML 1.1, as a reviewer's own tools may read twinlock.yaml) reads from each block, as JSON. */
function namesPyYamlReads(snippets: string[]): unknown[] {
  const r = spawnSync(
    "python3",
    ["-c", "import json, sys, yaml; print(json.dumps([yaml.safe_load(s)['reviewers'][0]['name'] for s in json.load(sys.stdin)]))"],
    { input: JSON.stringify(snippets), encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as unknown[];
}

/** Names keygen accepts, with the ones YAML's core schema reads as something other than text well represented. */
const acceptedName = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._ -]{0,20}[A-Za-z0-9._-]$/),
  fc.nat().map(String),
  fc.tuple(fc.nat(), fc.nat({ max: 999 })).map(([whole, part]) => `${whole}.${part}`),
  fc.tuple(fc.nat({ max: 99 }), fc.nat({ max: 99 })).map(([m, e]) => `${m}e${e}`),
  fc.constantFrom("true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "on", "No", "0x1F", "0o17", "1_000"),
);

/** Names YAML 1.2 or 1.1 reads as something other than text when plain, and two it reads as text. */
const YAML_LOOKALIKES = [
  "alice",
  "bad name",
  "true",
  "null",
  "NULL",
  "False",
  "on",
  "Off",
  "yes",
  "n",
  "1.0",
  "123",
  "1e3",
  "0x1F",
  "0o17",
  "0777",
  "1_000",
  "2026-12-01",
];

describe("twinlock keygen", () => {
  it("prints a reviewers block that twinlock.yaml accepts with the very name given, even one YAML would read as a boolean, null or number", async () => {
    for (const name of YAML_LOOKALIKES) {
      const r = await runCli(["keygen", "--name", name, "--out", freshDir()]);
      expect(r.code, r.output).toBe(0);
      expect(nameTwinlockReads(r.stdout), pastedSnippet(r.stdout)).toBe(name);
    }
  });

  it.skipIf(!hasPyYaml)(
    "prints a block a YAML 1.1 reader (PyYAML) reads with the same name: on, no, 0777 and 1_000 are quoted too",
    async () => {
      const snippets: string[] = [];
      for (const name of YAML_LOOKALIKES)
        snippets.push(pastedSnippet((await runCli(["keygen", "--name", name, "--out", freshDir()])).stdout));
      expect(namesPyYamlReads(snippets)).toEqual(YAML_LOOKALIKES);
    },
  );

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
        expect(nameTwinlockReads(r.stdout)).toBe(name);
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
