import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { runCli } from "../../test-support/run-cli.js";
import { copyExampleSuite, makeTempDir, removeTempDirs } from "../../test-support/temp-suite.js";
import { generateReviewerKey } from "../../trust/keys.js";

afterAll(removeTempDirs);

/**
 * `twinlock trust pin` on a copy of the example suite listing alice (a
 * person), `extra` reviewers and the planner agent's freeze key, and the
 * `revoked` entries given, signed with alice's key into a new home.
 */
async function pinAsAlice(options: { extra?: Array<{ name: string; public_key: string; rights: string[] }>; revoked?: string[] } = {}) {
  const suite = copyExampleSuite();
  const alice = generateReviewerKey();
  const config = path.join(suite, "twinlock.yaml");
  const doc = parseDocument(readFileSync(config, "utf8"));
  doc.set("reviewers", [
    { name: "alice", public_key: alice.publicKey, rights: ["review", "consent", "apply", "stop"] },
    ...(options.extra ?? []),
    { name: "planner-agent", public_key: generateReviewerKey().publicKey, rights: ["freeze"] },
  ]);
  if (options.revoked) doc.set("revoked", options.revoked);
  writeFileSync(config, doc.toString());
  const dir = makeTempDir();
  const key = path.join(dir, "alice.key");
  writeFileSync(key, alice.privatePem, { mode: 0o600 });
  const again = () => runCli(["trust", "pin", "--suite", suite, "--key", key, "--home", path.join(dir, "home")]);
  const run = await again();
  return { run, alice, again, suite, key, home: path.join(dir, "home") };
}

describe("twinlock trust pin", () => {
  it("prints the policy the gate will enforce, as twinlock read it, for the person to check against what they reviewed", async () => {
    const { run: r, alice } = await pinAsAlice();
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toContain(
      "  policy: signed receipts required; 1 approval(s) per revision; separate duties on; consent expires 4h; handoff format twinlock",
    );
    expect(r.stdout).toContain(`  reviewer alice ${alice.publicKey.slice(0, 20)}… may review, consent, apply, stop`);
  });

  it("prints each pair with its executor's modes and whether a dry run comes first, so a rule misspelt or left out shows", async () => {
    const { run: first, again, suite } = await pinAsAlice();
    expect(first.stdout).toContain("    MD-29→MD-30  modes DRAFT_ONLY, APPLY_SAFE, APPLY_APPROVED, VERIFY_ONLY; no dry run required\n");
    const executor = path.join(suite, "debugging", "md-30-debugging-executor.md");
    writeFileSync(
      executor,
      readFileSync(executor, "utf8").replace("exact_twin_only: true\n", "exact_twin_only: true\ndry_run_required: true\n"),
    );
    const r = await again();
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toContain(
      "    MD-29→MD-30  modes DRAFT_ONLY, APPLY_SAFE, APPLY_APPROVED, VERIFY_ONLY; a passed dry run first in APPLY modes\n",
    );
    expect(r.stdout.match(/^ {4}MD-\d+→MD-\d+ {2}modes /gm)).toHaveLength(6);
  });

  it("says nothing of reviewers when the pinner is one, and notes it when the suite lists only other keys (placeholders, say)", async () => {
    const { run, suite, again } = await pinAsAlice();
    expect(run.stdout).not.toMatch(/note: the key that pinned/);
    const config = path.join(suite, "twinlock.yaml");
    const doc = parseDocument(readFileSync(config, "utf8"));
    doc.set("reviewers", [
      { name: "bob", public_key: generateReviewerKey().publicKey, rights: ["review", "consent", "apply", "stop"] },
      { name: "planner-agent", public_key: generateReviewerKey().publicKey, rights: ["freeze"] },
    ]);
    writeFileSync(config, doc.toString());
    const r = await again();
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toMatch(
      /^ {2}note: the key that pinned is not one of the suite's reviewers \(bob\); only they can review and consent/m,
    );
  });

  it("says a pin moved to another folder of the same suite_id refuses the runs begun on the old one", async () => {
    const { suite, key, home } = await pinAsAlice();
    const copy = path.join(makeTempDir(), "copy");
    cpSync(suite, copy, { recursive: true });
    const r = await runCli(["trust", "pin", "--suite", copy, "--key", key, "--home", home]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toMatch(/^ {2}the pin moved from \S+: runs begun on that folder are refused from now on/m);
  });

  it("refuses to pin an executor whose rule key is misspelt (dry_run_requried), which the gate would ignore", async () => {
    const { again, suite } = await pinAsAlice();
    const executor = path.join(suite, "debugging", "md-30-debugging-executor.md");
    writeFileSync(
      executor,
      readFileSync(executor, "utf8").replace("exact_twin_only: true\n", "exact_twin_only: true\ndry_run_requried: true\n"),
    );
    const r = await again();
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/cannot pin: MD-30 .*FIELD_MISSPELT.*spell it `dry_run_required`/);
    // The library gives the next step as data; the CLI words it as the command that shows every problem.
    expect(r.stderr.trimEnd()).toMatch(/; fix it first \(`twinlock validate --suite \S+`\)$/);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  it("says, when a suite changed since its pin, the re-pin a person runs, as a command only at the terminal", async () => {
    const { suite, home } = await pinAsAlice();
    const config = path.join(suite, "twinlock.yaml");
    writeFileSync(config, `${readFileSync(config, "utf8")}# edited\n`);
    const r = await runCli(["init-run", path.join(makeTempDir(), "run.json"), "--suite", suite, "--planner", "MD-29", "--home", home]);
    expect(r.code, r.output).toBe(1);
    expect(r.stderr).toMatch(
      /changed since it was pinned .*; re-pin after reviewing the change \(`twinlock trust pin --suite \S+ --key FILE`\)/,
    );
  });

  it("says a re-pin of an unchanged suite renews the pin, and one of a changed suite replaces it", async () => {
    const { run: first, again, suite } = await pinAsAlice();
    expect(first.code, first.output).toBe(0);
    const same = await again();
    expect(same.stdout).toMatch(/^ {2}the suite is as pinned on \S+: the pin is renewed/m);
    const executor = path.join(suite, "debugging", "md-30-debugging-executor.md");
    writeFileSync(executor, `${readFileSync(executor, "utf8")}\nOne more line.\n`);
    const changed = await again();
    expect(changed.stdout).toMatch(/^ {2}replaces the pin of /m);
  });
});

describe("twinlock trust pin, refusing what it would read differently", () => {
  it("refuses a revoked entry that is no exact key line (bob's key without its padding), which would revoke nothing", async () => {
    const bob = generateReviewerKey();
    const { run: r } = await pinAsAlice({
      extra: [{ name: "bob", public_key: bob.publicKey, rights: ["review"] }],
      revoked: [bob.publicKey.replace(/=+$/, "")],
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot pin: twinlock\.yaml:\d+:\d+ CONFIG_INVALID .*is not an Ed25519 public key line/);
  });
});
