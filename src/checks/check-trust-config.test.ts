import { afterAll, describe, expect, it } from "vitest";
import { loadSuite } from "../suite/load-suite.js";
import { baseSuite, lineOf } from "../test-support/prompt-builder.js";
import { EXAMPLE_SUITE, removeTempDirs, writeSuite } from "../test-support/temp-suite.js";
import { generateReviewerKey, PUBLIC_KEY_PREFIX } from "../trust/keys.js";
import { checkTrustConfig } from "./check-trust-config.js";
import { validateSuite } from "./validate-suite.js";

afterAll(removeTempDirs);

interface Reviewer {
  name: string;
  key: string;
  rights: string[];
}

/**
 * twinlock.yaml text with these reviewers, revoked keys and policy lines, in
 * the shape `twinlock keygen` prints. A signing config also lists the planner
 * agent's freeze key and a person with the stop right, unless `bare`.
 */
function configText(reviewers: Reviewer[], options: { revoked?: string[]; policies?: string[]; bare?: boolean } = {}): string {
  if (!options.bare && options.policies?.includes("require_signed_receipts: true"))
    reviewers = [...reviewers, { name: "planner-agent", key: key(), rights: ["freeze"] }, { name: "ops", key: key(), rights: ["stop"] }];
  const lines = ["suite_id: fixture", "declared_pairs: 2"];
  if (reviewers.length > 0) {
    lines.push("reviewers:");
    for (const r of reviewers) lines.push(`  - name: ${r.name}`, `    public_key: ${r.key}`, `    rights: [${r.rights.join(", ")}]`);
  }
  if (options.revoked?.length) lines.push("revoked:", ...options.revoked.map((k) => `  - ${k}`));
  if (options.policies?.length) lines.push("policies:", ...options.policies.map((p) => `  ${p}`));
  return `${lines.join("\n")}\n`;
}

/** Load a base suite with this twinlock.yaml; the config must pass the schema so that the trust check sees it. */
function suiteWith(config: string) {
  const suite = loadSuite(writeSuite({ ...baseSuite(), "twinlock.yaml": config }));
  expect(suite.diagnostics, "the fixture config must pass the schema").toEqual([]);
  return suite;
}

const key = () => generateReviewerKey().publicKey;

describe("checkTrustConfig", () => {
  it("passes the example suite and a suite without reviewers or policies", () => {
    expect(checkTrustConfig(loadSuite(EXAMPLE_SUITE))).toEqual([]);
    expect(checkTrustConfig(suiteWith(configText([])))).toEqual([]);
  });

  it("passes reviewers with valid keys, unique names, and a policy they can meet", () => {
    const config = configText(
      [
        { name: "alice", key: key(), rights: ["review", "consent", "apply"] },
        { name: "bob", key: key(), rights: ["review"] },
      ],
      { policies: ["require_signed_receipts: true", "required_approvals: 2", "separate_duties: true"] },
    );
    expect(checkTrustConfig(suiteWith(config))).toEqual([]);
  });

  it("reports a public key that is not a valid Ed25519 key as CONFIG_INVALID at its line", () => {
    // Passes the schema's shape (ed25519: and 40+ base64 characters) but holds 33 bytes, not 32.
    const bad = `${PUBLIC_KEY_PREFIX}${Buffer.alloc(33, 7).toString("base64")}`;
    const config = configText([
      { name: "alice", key: key(), rights: ["review", "consent"] },
      { name: "mallory", key: bad, rights: ["review"] },
    ]);
    expect(checkTrustConfig(suiteWith(config))).toEqual([
      {
        code: "CONFIG_INVALID",
        severity: "error",
        file: "twinlock.yaml",
        line: lineOf(config, `    public_key: ${bad}`),
        col: 1,
        message: expect.stringContaining("reviewer mallory: public_key is not a valid Ed25519 key"),
      },
    ]);
  });

  it("reports a reviewer name listed twice as CONFIG_INVALID naming it", () => {
    const config = configText([
      { name: "alice", key: key(), rights: ["review"] },
      { name: "alice", key: key(), rights: ["consent"] },
    ]);
    const problems = checkTrustConfig(suiteWith(config));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ code: "CONFIG_INVALID", severity: "error", file: "twinlock.yaml", col: 1 });
    expect(problems[0]?.message).toContain("reviewer name alice is listed twice");
    const nameLines = config.split("\n").flatMap((l, i) => (l === "  - name: alice" ? [i + 1] : []));
    expect(nameLines).toHaveLength(2);
    expect(nameLines).toContain(problems[0]?.line);
  });

  it("reports one public key listed for two reviewers", () => {
    const shared = key();
    const config = configText([
      { name: "alice", key: shared, rights: ["review"] },
      { name: "bob", key: shared, rights: ["consent"] },
    ]);
    const problems = checkTrustConfig(suiteWith(config));
    expect(problems.map((d) => [d.code, d.severity])).toEqual([["CONFIG_INVALID", "error"]]);
    expect(problems[0]?.message).toContain("reviewer bob: this public key is listed for another reviewer too");
  });

  it("reports require_signed_receipts when no reviewer holds the consent right, at the policy's line", () => {
    const config = configText([{ name: "alice", key: key(), rights: ["review", "apply"] }], {
      policies: ["require_signed_receipts: true"],
    });
    expect(checkTrustConfig(suiteWith(config))).toEqual([
      {
        code: "CONFIG_INVALID",
        severity: "error",
        file: "twinlock.yaml",
        line: lineOf(config, "  require_signed_receipts:"),
        col: 1,
        message: expect.stringContaining("require_signed_receipts is true but no unrevoked reviewer has the consent right"),
      },
    ]);
  });

  it("reports require_signed_receipts with no reviewers at all, for the review, consent and freeze rights, and warns about stop", () => {
    const config = configText([], { policies: ["require_signed_receipts: true"], bare: true });
    const problems = checkTrustConfig(suiteWith(config));
    const messages = problems.map((d) => d.message);
    expect(messages).toHaveLength(4);
    expect(messages[0]).toContain("has the review right");
    expect(messages[1]).toContain("has the consent right");
    expect(messages[2]).toContain("no unrevoked key has the freeze right, so no handoff could be frozen");
    expect(problems[3]).toMatchObject({ severity: "warning", message: expect.stringContaining("a raised !STOP could never be lifted") });
  });

  it("reports required_approvals larger than the reviewers with the review right, at its line", () => {
    const config = configText(
      [
        { name: "alice", key: key(), rights: ["review", "consent"] },
        { name: "bob", key: key(), rights: ["review"] },
        { name: "carol", key: key(), rights: ["consent", "apply"] },
      ],
      { policies: ["require_signed_receipts: true", "required_approvals: 3"] },
    );
    expect(checkTrustConfig(suiteWith(config))).toEqual([
      {
        code: "CONFIG_INVALID",
        severity: "error",
        file: "twinlock.yaml",
        line: lineOf(config, "  required_approvals:"),
        col: 1,
        message: expect.stringContaining("required_approvals is 3 but only 2 unrevoked reviewer(s) have the review right"),
      },
    ]);
  });

  it("warns (not errors) about a reviewer whose key is revoked, at the key's line", () => {
    const revoked = key();
    const config = configText(
      [
        { name: "alice", key: key(), rights: ["review", "consent"] },
        { name: "bob", key: revoked, rights: ["review"] },
      ],
      { revoked: [revoked] },
    );
    expect(checkTrustConfig(suiteWith(config))).toEqual([
      {
        code: "CONFIG_INVALID",
        severity: "warning",
        file: "twinlock.yaml",
        line: lineOf(config, `    public_key: ${revoked}`),
        col: 1,
        message: expect.stringContaining("reviewer bob's key is revoked"),
      },
    ]);
  });

  it("does not count a revoked reviewer towards the policy", () => {
    const revoked = key();
    const config = configText(
      [
        { name: "alice", key: key(), rights: ["review"] },
        { name: "bob", key: revoked, rights: ["review", "consent"] },
      ],
      { revoked: [revoked], policies: ["require_signed_receipts: true"] },
    );
    const problems = checkTrustConfig(suiteWith(config)).map((d) => [d.severity, d.message]);
    expect(problems).toHaveLength(2);
    expect(problems).toContainEqual(["warning", expect.stringContaining("reviewer bob's key is revoked")]);
    expect(problems).toContainEqual(["error", expect.stringContaining("no unrevoked reviewer has the consent right")]);
  });

  it("reports a revoked entry shaped like a key line that is no Ed25519 key (the schema refuses any other text)", () => {
    const notAKey = `${PUBLIC_KEY_PREFIX}${Buffer.alloc(33, 7).toString("base64")}`;
    const config = configText([{ name: "alice", key: key(), rights: ["review", "consent"] }], { revoked: [notAKey] });
    expect(checkTrustConfig(suiteWith(config))).toEqual([
      {
        code: "CONFIG_INVALID",
        severity: "error",
        file: "twinlock.yaml",
        line: lineOf(config, `  - ${notAKey}`),
        col: 1,
        message: expect.stringContaining("is not an Ed25519 public key line"),
      },
    ]);
  });

  it("is run by validate, so a bad key fails the suite and a revoked one only warns", () => {
    const bad = `${PUBLIC_KEY_PREFIX}${Buffer.alloc(33, 7).toString("base64")}`;
    const failing = validateSuite(suiteWith(configText([{ name: "mallory", key: bad, rights: ["review"] }])));
    expect(failing.errors).toBe(1);
    // Sorted by line: the unsigned warning sits at suite_id (line 1), the bad key below it.
    expect(failing.diagnostics.map((d) => [d.code, d.file])).toEqual([
      ["SUITE_UNSIGNED", "twinlock.yaml"],
      ["CONFIG_INVALID", "twinlock.yaml"],
    ]);

    const revoked = key();
    const warned = validateSuite(suiteWith(configText([{ name: "bob", key: revoked, rights: ["review"] }], { revoked: [revoked] })));
    expect(warned).toMatchObject({ errors: 0, warnings: 2 });
    expect(warned.diagnostics.map((d) => [d.code, d.severity])).toEqual([
      ["SUITE_UNSIGNED", "warning"],
      ["CONFIG_INVALID", "warning"],
    ]);
  });
});
