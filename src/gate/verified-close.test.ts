/**
 * A verified close is a person's call (issue 26): on a signing suite it is a
 * verification receipt signed by a key with the `verify` right, bound to the
 * change recorded with the close, and refused without such a key or on a
 * change that does not conform; the other endings keep their rules, and the
 * agent's report is never verified.
 */
import { createPrivateKey } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { ExportedTrustSchema } from "../ci/exported-trust.js";
import { hashCanonical } from "../crypto/canonical-hash.js";
import { loadPinnedPolicy } from "../home/suite-pins.js";
import { parseReviewerRights } from "../passkey/reviewer-registry.js";
import { type SuiteConfig, SuiteConfigSchema } from "../suite/suite-config.js";
import { runCli } from "../test-support/run-cli.js";
import { conformingChange, type GateRun, makeGateRun, PLANNER, removeGateRuns, storeOf, workflowOf } from "../test-support/run-fixture.js";
import { ALICE_KEY, aliceKeyFile, driveSignedToExecuting } from "../test-support/signed-run.js";
import { judgeRunReceipts } from "../trust/judge-run-receipts.js";
import { generateReviewerKey, publicKeyLine } from "../trust/keys.js";
import { closeWorkflow } from "./close-workflow.js";

afterAll(removeGateRuns);

/** bob reviews and consents but may not verify; the planner agent only freezes. */
const BOB_KEY = createPrivateKey(generateReviewerKey().privatePem);
const PLANNER_KEY = createPrivateKey(generateReviewerKey().privatePem);

/** A run of a suite that requires signed receipts, driven to executing by alice (review, consent, apply, verify). */
async function signingRun(): Promise<GateRun> {
  const g = makeGateRun({ copySuite: true });
  const file = path.join(g.suite, "twinlock.yaml");
  const doc = parseDocument(readFileSync(file, "utf8"));
  doc.set("reviewers", [
    { name: "alice", public_key: publicKeyLine(ALICE_KEY), rights: ["review", "consent", "apply", "verify"] },
    { name: "bob", public_key: publicKeyLine(BOB_KEY), rights: ["review", "consent"] },
    { name: "planner-agent", public_key: publicKeyLine(PLANNER_KEY), rights: ["freeze"] },
  ]);
  doc.setIn(["policies", "require_signed_receipts"], true);
  doc.setIn(["policies", "separate_duties"], false);
  writeFileSync(file, doc.toString());
  await driveSignedToExecuting(g, {}, { freezeKey: PLANNER_KEY });
  return g;
}

const pinnedConfig = (g: GateRun): SuiteConfig => {
  const run = storeOf(g);
  return loadPinnedPolicy(run.home, JSON.parse(readFileSync(g.runFile, "utf8")).state.suite).config;
};

describe("a verified close on a signing suite", () => {
  it("is refused without a key (attack: anyone at the terminal says verified), and records nothing", async () => {
    const g = await signingRun();
    const before = readFileSync(g.runFile);
    await expect(
      closeWorkflow({
        run: g.runFile,
        store: storeOf(g),
        planner: PLANNER,
        result: "verified",
        actor: "alice",
        executed: conformingChange(g),
      }),
    ).rejects.toThrow(
      "refused: no key given: a verified close on this suite is signed by a reviewer holding the verify right; pass --key FILE or set TWINLOCK_KEY",
    );
    expect(readFileSync(g.runFile).equals(before)).toBe(true);
    expect(workflowOf(g).state).toBe("executing");
  });

  it("is refused under a listed key without the verify right, and records nothing", async () => {
    const g = await signingRun();
    const before = readFileSync(g.runFile);
    await expect(
      closeWorkflow({
        run: g.runFile,
        store: storeOf(g),
        planner: PLANNER,
        result: "verified",
        key: BOB_KEY,
        executed: conformingChange(g),
      }),
    ).rejects.toThrow(
      "bob's key has the rights review, consent, not verify: close verified with a key that has the verify right, or add verify to that reviewer's rights under `reviewers:` in twinlock.yaml and re-pin it (twinlock trust pin --suite DIR --key PINNER.key)",
    );
    expect(readFileSync(g.runFile).equals(before)).toBe(true);
  });

  it("is refused under a key no reviewer lists, saying to add it under reviewers: and re-pin, and records nothing", async () => {
    const g = await signingRun();
    const before = readFileSync(g.runFile);
    await expect(
      closeWorkflow({
        run: g.runFile,
        store: storeOf(g),
        planner: PLANNER,
        result: "verified",
        key: createPrivateKey(generateReviewerKey().privatePem),
        actor: "carol",
        executed: conformingChange(g),
      }),
    ).rejects.toThrow(
      /signed by an unknown key \(.*\), not one of the suite's reviewers: add it under `reviewers:` with the verify right in twinlock\.yaml and re-pin it \(twinlock trust pin --suite DIR --key PINNER\.key\)$/,
    );
    expect(readFileSync(g.runFile).equals(before)).toBe(true);
  });

  it("is refused from the CLI on a change that does not conform, even under alice's key (exit 1, naming the deviation), and records nothing", async () => {
    const g = await signingRun();
    const before = readFileSync(g.runFile);
    const list = path.join(g.dir, "changed.txt");
    // Neither file is in the folder the command runs in: both targets read as deleted, so neither action is done.
    writeFileSync(list, "cart/cache.go\ncart/cache_race_test.go\n");
    const r = await runCli([
      "close",
      g.runFile,
      PLANNER,
      "--result",
      "verified",
      "--changed-files",
      list,
      "--criterion",
      "V1=passed:go test",
      "--criterion",
      "V2=passed:go test -race",
      "--key",
      aliceKeyFile(g.dir),
      "--home",
      g.home,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^twinlock: MD-29's change does not conform to the approved plan \(action A1 not done .*\), so the work is not verified/,
    );
    expect(readFileSync(g.runFile).equals(before)).toBe(true);
  });

  it("records alice's close as her signed verification receipt, bound to the recorded change, that verify-receipts judges against the verify right", async () => {
    const g = await signingRun();
    const { workflow } = await closeWorkflow({
      run: g.runFile,
      store: storeOf(g),
      planner: PLANNER,
      result: "verified",
      key: ALICE_KEY,
      executed: conformingChange(g),
    });
    const result = workflow.result;
    expect(result).toMatchObject({ outcome: "verified", by: "alice" });
    expect(result?.report).toBeUndefined();
    expect(result?.receipt).toMatchObject({ kind: "verification", planner: PLANNER, by: "alice", result: "verified" });
    expect(result?.receipt?.signature?.signer).toBe("alice");
    expect(result?.receipt?.execution_hash).toBe(hashCanonical(result?.execution));
    const run = await storeOf(g).read(g.runFile);
    const config = pinnedConfig(g);
    const judged = (c: SuiteConfig) => judgeRunReceipts(run, c).filter((j) => j.kind === "verification");
    expect(judged(config).map((j) => [j.person, j.ok, j.detail])).toEqual([["alice", true, "signed by alice"]]);
    // The same receipt under a trust that gives alice no verify right is not trusted.
    const noVerify = { ...config, reviewers: config.reviewers?.map((x) => ({ ...x, rights: x.rights.filter((y) => y !== "verify") })) };
    expect(judged(noVerify as SuiteConfig).map((j) => j.ok)).toEqual([false]);
    const cli = await runCli(["verify-receipts", g.runFile, "--home", g.home]);
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/verification.*signed by alice/);
  });

  it("keeps the other endings as they were: failed after execution needs no key", async () => {
    const g = await signingRun();
    const { workflow } = await closeWorkflow({
      run: g.runFile,
      store: storeOf(g),
      planner: PLANNER,
      result: "failed",
      residual: "V2 races",
      actor: "alice",
    });
    expect(workflow.result).toMatchObject({ outcome: "failed", by: "alice" });
    expect(workflow.result?.receipt).toBeUndefined();
  });
});

describe("the verify right", () => {
  const reviewer = { name: "vera", public_key: publicKeyLine(BOB_KEY), rights: ["verify"] };

  it("is a right twinlock.yaml's reviewers, the export's trust and a passkey's enrolment all take", () => {
    expect(SuiteConfigSchema.safeParse({ reviewers: [reviewer] }).success).toBe(true);
    const exported = {
      format: "twinlock-export-trust/1",
      suite_id: "s",
      config_sha256: `sha256:${"0".repeat(64)}`,
      exported_from: "home",
      exported_at: "2026-01-01T00:00:00.000Z",
      policies: {},
      reviewers: [reviewer],
      revoked: [],
    };
    expect(ExportedTrustSchema.safeParse(exported).success).toBe(true);
    expect(parseReviewerRights("review,verify")).toEqual(["review", "verify"]);
  });
});
