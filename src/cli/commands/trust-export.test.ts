import { execFileSync } from "node:child_process";
import { createPrivateKey } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTrustFile } from "../../ci/read-trust-file.js";
import { signTrust } from "../../ci/signed-trust.js";
import { admit } from "../../gate/admit.js";
import {
  EXECUTOR,
  freezeApproveConsent,
  type Reviewer,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverTempDir,
  serverWorld,
} from "../../test-support/gate-server-fixture.js";
import { runCli } from "../../test-support/run-cli.js";
import { TEST_PINNER } from "../../test-support/run-fixture.js";
import { generateReviewerKey, publicKeyLine } from "../../trust/keys.js";

/**
 * A run a person approved and consented to with a passkey in the browser,
 * checked the way CI checks it: `trust export` by a pinner, then `verify`
 * with that file and the pinner's public key.
 */
let w: ServerWorld;
let alice: Reviewer;
let keys: string;
const pinnerKey = () => path.join(keys, "pinner.key");
const pinnerPub = () => path.join(keys, "pinner.pub");

beforeAll(async () => {
  w = await serverWorld({ signing: true });
  alice = await reviewerFor(w, "alice");
  await freezeApproveConsent(w, alice);
  const admitted = await admit({ store: w.store, run: w.runFile, executor: EXECUTOR, actor: "executor-agent" });
  expect(admitted.admitted, JSON.stringify(admitted.checks.filter((c) => !c.ok))).toBe(true);
  keys = serverTempDir("twinlock-trust-keys-");
  writeFileSync(pinnerKey(), TEST_PINNER.export({ type: "pkcs8", format: "pem" }).toString(), { mode: 0o600 });
  writeFileSync(pinnerPub(), `${publicKeyLine(TEST_PINNER)}\n`);
}, 120_000);
afterAll(removeServerWorlds);

const exportTrust = (out: string, key = pinnerKey()) => runCli(["trust", "export", "--out", out, "--key", key, "--home", w.home.dir]);

describe("trust export and verify: a browser approval passes CI", () => {
  it("verifies a run approved and consented with a passkey against the pinner-signed trust file, and not against twinlock.yaml alone", async () => {
    const out = path.join(keys, "twinlock-trust.json");
    const e = await exportTrust(out);
    expect(e.code, e.output).toBe(0);
    expect(e.stdout).toMatch(/1 passkey/);
    expect(e.stdout).toMatch(/ {2}alice: passkey /);
    const ok = await runCli(["verify", w.runFile, "--trust", out, "--pinner-key", pinnerPub()]);
    expect(ok.code, ok.output).toBe(0);
    expect(ok.stdout).toMatch(/^verified: run /m);
    // The approval and the consent were judged as passkey receipts of alice, offline.
    expect(ok.stdout).toMatch(/^ok {2}.*alice/m);
    const yamlOnly = await runCli(["verify", w.runFile, "--trust", path.join(w.suite, "twinlock.yaml")]);
    expect(yamlOnly.code).toBe(1);
  });

  it("refuses the trust file once a byte of it is changed, naming the edit", async () => {
    const out = path.join(keys, "edited.json");
    expect((await exportTrust(out)).code).toBe(0);
    const doc = JSON.parse(readFileSync(out, "utf8"));
    // The agent adds its own key as a reviewer with every right.
    doc.trust.reviewers.push({ name: "agent", public_key: generateReviewerKey().publicKey, rights: ["review", "consent"] });
    writeFileSync(out, JSON.stringify(doc));
    const r = await runCli(["verify", w.runFile, "--trust", out, "--pinner-key", pinnerPub()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/does not match its signature: it was changed after `twinlock trust export` wrote it/);
  });

  it("refuses a trust file signed by a key that is not the pinned pinner's, and a pinner key file the agent swapped", async () => {
    const other = generateReviewerKey();
    const otherKey = path.join(keys, "other.key");
    writeFileSync(otherKey, other.privatePem, { mode: 0o600 });
    // Not a pinner of the gate: trust export itself refuses.
    const refused = await exportTrust(path.join(keys, "by-other.json"), otherKey);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is not a pinner of .*only a pinner's key signs what CI trusts/);
    // A genuine export checked against another key: refused, naming the signer.
    const out = path.join(keys, "genuine.json");
    expect((await exportTrust(out)).code).toBe(0);
    const otherPub = path.join(keys, "other.pub");
    writeFileSync(otherPub, `${other.publicKey}\n`);
    const r = await runCli(["verify", w.runFile, "--trust", out, "--pinner-key", otherPub]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is signed by ed25519:\S+, which is not the pinner key given/);
  });

  it("asks for the pinner key for a signed trust file, and refuses an export's unsigned trust.json as CI's trust", async () => {
    const out = path.join(keys, "needs-key.json");
    expect((await exportTrust(out)).code).toBe(0);
    const noKey = await runCli(["verify", w.runFile, "--trust", out]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/is a signed trust file; give --pinner-key FILE/);
    const bundle = path.join(serverTempDir("twinlock-trust-bundle-"), "export");
    expect((await runCli(["export", w.runFile, "--out", bundle, "--home", w.home.dir])).code).toBe(0);
    const unsigned = await runCli(["verify", w.runFile, "--trust", path.join(bundle, "trust.json")]);
    expect(unsigned.code).toBe(1);
    expect(unsigned.stderr).toMatch(/is the trust\.json beside an export, which whoever wrote the export could write/);
  });

  it("shows a newly enrolled passkey as a diff of the re-exported file", async () => {
    const before = path.join(keys, "before.json");
    expect((await exportTrust(before)).code).toBe(0);
    await reviewerFor(w, "bob");
    const after = path.join(keys, "after.json");
    expect((await exportTrust(after)).code).toBe(0);
    const names = (f: string) => (JSON.parse(readFileSync(f, "utf8")).trust.reviewers as { name: string }[]).map((r) => r.name);
    expect(names(after).filter((n) => !names(before).includes(n))).toEqual(["bob"]);
  });

  it("with --git-range reads the trust file and the pinner key from the base commit, refusing a change that swaps both", async () => {
    const repo = serverTempDir("twinlock-trust-repo-");
    const gitIn = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: repo })
        .toString()
        .trim();
    expect((await exportTrust(path.join(repo, "twinlock-trust.json"))).code).toBe(0);
    writeFileSync(path.join(repo, "twinlock-pinner.pub"), readFileSync(pinnerPub()));
    gitIn("init", "-q", "-b", "main");
    gitIn("add", "-A");
    gitIn("commit", "-q", "-m", "base: the team's trust");
    const base = gitIn("rev-parse", "HEAD");
    const read = () =>
      readTrustFile({ file: "twinlock-trust.json", pinnerKey: "twinlock-pinner.pub", gitRange: `${base}...HEAD`, cwd: repo });
    expect(read().source).toBe(`${base}:twinlock-trust.json`);
    // The agent re-signs the trust file with its own key, adds itself, and swaps the pinner key beside it.
    const own = generateReviewerKey();
    const doc = JSON.parse(readFileSync(path.join(repo, "twinlock-trust.json"), "utf8"));
    doc.trust.reviewers.push({ name: "agent", public_key: own.publicKey, rights: ["review", "consent"] });
    writeFileSync(path.join(repo, "twinlock-trust.json"), JSON.stringify(signTrust(doc.trust, createPrivateKey(own.privatePem))));
    writeFileSync(path.join(repo, "twinlock-pinner.pub"), `${own.publicKey}\n`);
    gitIn("commit", "-q", "-am", "the agent's change");
    expect(read).toThrow(/in the working tree differs from the base commit's/);
  });

  it("is taken by verify-receipts --exported and verify-attestation too, judging the passkey receipts offline", async () => {
    const out = path.join(keys, "for-audit.json");
    expect((await exportTrust(out)).code).toBe(0);
    const bundle = path.join(serverTempDir("twinlock-trust-audit-"), "export");
    expect((await runCli(["export", w.runFile, "--out", bundle, "--home", w.home.dir])).code).toBe(0);
    const receipts = await runCli([
      "verify-receipts",
      "--exported",
      path.join(bundle, "run.json"),
      "--trust",
      out,
      "--pinner-key",
      pinnerPub(),
    ]);
    expect(receipts.code, receipts.output).toBe(0);
    expect(receipts.stdout).toMatch(/alice/);
    const attester = generateReviewerKey();
    const attesterKey = path.join(keys, "attester.key");
    const attesterPub = path.join(keys, "attester.pub");
    writeFileSync(attesterKey, attester.privatePem, { mode: 0o600 });
    writeFileSync(attesterPub, `${attester.publicKey}\n`);
    const made = path.join(serverTempDir("twinlock-trust-attest-"), "out");
    const a = await runCli(["attest", w.runFile, "--out", made, "--key", attesterKey, "--home", w.home.dir]);
    expect(a.code, a.output).toBe(0);
    const files = readdirSync(made).map((f) => path.join(made, f));
    const checked = await runCli([
      "verify-attestation",
      ...files,
      "--run",
      w.runFile,
      "--attester",
      attesterPub,
      "--trust",
      out,
      "--pinner-key",
      pinnerPub(),
    ]);
    expect(checked.code, checked.output).toBe(0);
    expect(checked.stdout).toContain("receipts signed by trusted reviewers");
  });
});
