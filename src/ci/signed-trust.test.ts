import { createPrivateKey } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateReviewerKey } from "../trust/keys.js";
import type { ExportedTrust } from "./exported-trust.js";
import { MAX_TRUST_FILE_BYTES, openSignedTrust, pinnerKeysOf, signTrust } from "./signed-trust.js";

const pinner = generateReviewerKey();
const pinnerKey = createPrivateKey(pinner.privatePem);

const trustOf = (names: string[]): ExportedTrust => ({
  format: "twinlock-export-trust/1",
  suite_id: "shop",
  config_sha256: `sha256:${"c".repeat(64)}`,
  exported_from: "gate home /srv/gate",
  exported_at: "2026-12-02T00:00:00.000Z",
  policies: {},
  reviewers: names.map((name) => ({
    name,
    public_key: generateReviewerKey().publicKey,
    rights: ["review", "consent"] as const,
  })) as ExportedTrust["reviewers"],
  revoked: [],
  gate_keys: [{ name: "gate", public_key: generateReviewerKey().publicKey }],
});

describe("a signed trust file", () => {
  it("opens under its pinner's key and gives the trust checks its reviewers, revocations and gate keys", () => {
    const trust = trustOf(["alice", "bob"]);
    const { config } = openSignedTrust(JSON.stringify(signTrust(trust, pinnerKey)), "t.json", [pinner.publicKey]);
    expect(config.reviewers?.map((r) => r.name)).toEqual(["alice", "bob"]);
    expect(config.gate_keys).toEqual(trust.gate_keys);
  });

  it("is refused after any change to what it trusts: a reviewer renamed, added, or given a right", () => {
    fc.assert(
      fc.property(fc.constantFrom("rename", "add", "right"), fc.string({ minLength: 1, maxLength: 20 }), (change, name) => {
        const doc = signTrust(trustOf(["alice"]), pinnerKey);
        const r = doc.trust.reviewers[0] as ExportedTrust["reviewers"][number];
        if (change === "rename") r.name = r.name === name ? `${name}!` : name;
        if (change === "add") doc.trust.reviewers.push({ name, public_key: generateReviewerKey().publicKey, rights: ["review"] });
        if (change === "right") r.rights = [...r.rights, "stop"];
        expect(() => openSignedTrust(JSON.stringify(doc), "t.json", [pinner.publicKey])).toThrow(/does not match its signature/);
      }),
      { numRuns: 30 },
    );
  });

  it("is refused when another key signed it, even one listed nowhere else", () => {
    const other = generateReviewerKey();
    const doc = signTrust(trustOf(["alice"]), createPrivateKey(other.privatePem));
    expect(() => openSignedTrust(JSON.stringify(doc), "t.json", [pinner.publicKey])).toThrow(/which is not the pinner key given/);
  });

  it("refuses a file over its budget before parsing it, and one that is not the format, each in one line", () => {
    expect(() => openSignedTrust(`{"x":"${"a".repeat(MAX_TRUST_FILE_BYTES)}"}`, "big.json", [pinner.publicKey])).toThrow(
      `the trust file big.json is over ${MAX_TRUST_FILE_BYTES} bytes`,
    );
    expect(() => openSignedTrust("{", "t.json", [pinner.publicKey])).toThrow("is not JSON");
    expect(() => openSignedTrust('{"format":"twinlock-signed-trust/1"}', "t.json", [pinner.publicKey])).toThrow(
      "is not a signed trust file (twinlock-signed-trust/1)",
    );
  });

  it("reads a pinner key file's ed25519 lines, skipping comments, and refuses anything else in it", () => {
    expect(pinnerKeysOf(`# the team's pinner\n${pinner.publicKey}\n`, "p.pub")).toEqual([pinner.publicKey]);
    expect(() => pinnerKeysOf("# nothing\n", "p.pub")).toThrow("holds no key");
    expect(() => pinnerKeysOf(`${pinner.publicKey}\nssh-ed25519 AAAA\n`, "p.pub")).toThrow("a line that is not an ed25519: public key");
  });
});
