import { createHash, generateKeyPairSync } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { receiptSigningBytes } from "../trust/sign-receipt.js";
import { type AuthenticatorTweaks, SoftwareAuthenticator, type SoftwareKeyType } from "./software-authenticator.js";
import {
  type AssertionExpectation,
  verifyWebAuthnAssertion,
  verifyWebAuthnReceipt,
  type WebAuthnEnrolment,
} from "./verify-webauthn-assertion.js";
import { receiptChallenge, receiptChallengeBase64url } from "./webauthn-challenge.js";
import { WEBAUTHN_KEY_PREFIX } from "./webauthn-key-line.js";
import { type WebAuthnSignature, WebAuthnSignatureSchema, webauthnSignatureOf } from "./webauthn-signature.js";

const RP = { rpId: "localhost", origin: "http://localhost:7420" };

const RECEIPT = {
  kind: "review",
  run_id: "run_0123456789abcdef",
  planner: "MD-29",
  executor: "MD-28",
  reviewer: "alice",
  decision: "approved",
  feedback: null,
  handoff_hash: `sha256:${"a".repeat(64)}`,
  revision: 1,
  policy_digest: `sha256:${"b".repeat(64)}`,
  at: "2025-01-01T00:00:00.000Z",
};

const authenticators = {
  ES256: new SoftwareAuthenticator("ES256"),
  EdDSA: new SoftwareAuthenticator("EdDSA"),
  RS256: new SoftwareAuthenticator("RS256"),
};
const alice = authenticators.ES256;

function enrolmentOf(a: SoftwareAuthenticator): WebAuthnEnrolment {
  return { credential_id: a.credentialId, public_key: a.keyLine, rp_id: RP.rpId, origins: [RP.origin] };
}

/** The receipt signed by `a`'s passkey the way the server will: the challenge is the receipt's own. */
function signWithPasskey<R extends object>(
  receipt: R,
  a: SoftwareAuthenticator,
  tweaks: AuthenticatorTweaks = {},
): R & { signature: WebAuthnSignature } {
  const assertion = a.assert(receiptChallenge(receipt), RP, tweaks);
  return { ...receipt, signature: webauthnSignatureOf(assertion, a.keyLine, "alice") };
}

function codeOf(receipt: object, a = alice): string {
  const verdict = verifyWebAuthnReceipt(receipt, enrolmentOf(a));
  return verdict.ok ? "ok" : verdict.code;
}

describe("receiptChallenge", () => {
  it("is the sha256 of the receipt's signing bytes, base64url in client data", () => {
    const expected = createHash("sha256").update(receiptSigningBytes(RECEIPT)).digest();
    expect(receiptChallenge(RECEIPT).equals(expected)).toBe(true);
    expect(receiptChallengeBase64url(RECEIPT)).toBe(expected.toString("base64url"));
  });

  it("ignores the signature and consumed_at, like the Ed25519 signing bytes", () => {
    expect(receiptChallenge({ ...RECEIPT, signature: { x: 1 }, consumed_at: "now" }).equals(receiptChallenge(RECEIPT))).toBe(true);
  });
});

describe("verifyWebAuthnReceipt", () => {
  for (const type of ["ES256", "EdDSA", "RS256"] as SoftwareKeyType[]) {
    it(`accepts a receipt signed by an ${type} passkey`, () => {
      const a = authenticators[type as keyof typeof authenticators];
      const signed = signWithPasskey(RECEIPT, a);
      expect(WebAuthnSignatureSchema.parse(signed.signature)).toEqual(signed.signature);
      expect(verifyWebAuthnReceipt(signed, enrolmentOf(a))).toEqual({ ok: true });
    });
  }

  it("refuses a receipt whose decision was changed after signing", () => {
    const signed = signWithPasskey(RECEIPT, alice);
    expect(codeOf({ ...signed, decision: "declined" })).toBe("challenge-mismatch");
  });

  it("refuses a passkey signature an agent copies onto a receipt of another run or revision", () => {
    const { signature } = signWithPasskey(RECEIPT, alice);
    expect(codeOf({ ...RECEIPT, run_id: "run_fedcba9876543210", signature })).toBe("challenge-mismatch");
    expect(codeOf({ ...RECEIPT, revision: 2, signature })).toBe("challenge-mismatch");
  });

  it("refuses a receipt with an added field (the challenge covers the whole receipt)", () => {
    expect(codeOf({ ...signWithPasskey(RECEIPT, alice), note: "x" })).toBe("challenge-mismatch");
  });

  it("refuses an assertion made without user verification", () => {
    expect(codeOf(signWithPasskey(RECEIPT, alice, { userVerified: false }))).toBe("user-not-verified");
  });

  it("refuses an assertion made without user presence", () => {
    expect(codeOf(signWithPasskey(RECEIPT, alice, { userPresent: false }))).toBe("user-not-present");
  });

  it("refuses an assertion made for another relying party", () => {
    expect(codeOf(signWithPasskey(RECEIPT, alice, { rpId: "evil.example" }))).toBe("wrong-rp");
  });

  it("refuses an assertion made on another origin", () => {
    expect(codeOf(signWithPasskey(RECEIPT, alice, { origin: "http://127.0.0.1:7420" }))).toBe("wrong-origin");
  });

  it("refuses an assertion made in a cross-origin frame", () => {
    expect(codeOf(signWithPasskey(RECEIPT, alice, { crossOrigin: true }))).toBe("cross-origin");
  });

  it("refuses client data of a registration (webauthn.create)", () => {
    expect(codeOf(signWithPasskey(RECEIPT, alice, { type: "webauthn.create" }))).toBe("wrong-type");
  });

  it("refuses a signature made by another passkey than the one the receipt names", () => {
    const mallory = new SoftwareAuthenticator("ES256");
    const forged = signWithPasskey(RECEIPT, mallory);
    const claimed = { ...forged, signature: { ...forged.signature, public_key: alice.keyLine, credential_id: alice.credentialId } };
    expect(codeOf(claimed)).toBe("bad-signature");
  });

  it("refuses a receipt naming another credential or key than the enrolment's", () => {
    const signed = signWithPasskey(RECEIPT, alice);
    expect(codeOf({ ...signed, signature: { ...signed.signature, credential_id: "AAAA" } })).toBe("wrong-credential");
    expect(codeOf({ ...signed, signature: { ...signed.signature, public_key: authenticators.EdDSA.keyLine } })).toBe("wrong-key");
  });

  it("refuses truncated authenticator data", () => {
    const signed = signWithPasskey(RECEIPT, alice);
    const short = Buffer.from(signed.signature.authenticator_data, "base64url").subarray(0, 36).toString("base64url");
    expect(codeOf({ ...signed, signature: { ...signed.signature, authenticator_data: short } })).toBe("bad-authenticator-data");
  });

  it("refuses garbage or non-canonical base64 in any byte field", () => {
    const signed = signWithPasskey(RECEIPT, alice);
    for (const [field, junk] of [
      ["authenticator_data", "!!!not base64!!!"],
      ["client_data_json", `${signed.signature.client_data_json}==`],
      ["value", `${signed.signature.value}=`],
      ["value", "not base64 at all"],
      ["value", ""],
      ["value", 42],
    ] as const)
      expect(codeOf({ ...signed, signature: { ...signed.signature, [field]: junk } }), field).toBe("bad-encoding");
  });

  it("refuses, without throwing, a receipt that has no canonical form", () => {
    const signed = signWithPasskey(RECEIPT, alice);
    expect(codeOf({ ...signed, feedback: "\ud800" })).toBe("bad-receipt");
  });

  it("refuses a receipt without a passkey signature", () => {
    expect(codeOf(RECEIPT)).toBe("not-webauthn");
    expect(codeOf({ ...RECEIPT, signature: { public_key: "ed25519:x", signer: "alice", value: "x" } })).toBe("not-webauthn");
  });
});

describe("verifyWebAuthnAssertion", () => {
  const challenge = receiptChallenge(RECEIPT);
  const expect_: AssertionExpectation = { challenge, rpId: RP.rpId, origins: [RP.origin] };

  function bytesOf(a: SoftwareAuthenticator, tweaks: AuthenticatorTweaks = {}) {
    const r = a.assert(challenge, RP, tweaks).response;
    return {
      publicKey: a.keyLine,
      authenticatorData: Buffer.from(r.authenticatorData, "base64url"),
      clientDataJSON: Buffer.from(r.clientDataJSON, "base64url"),
      signature: Buffer.from(r.signature, "base64url"),
    };
  }

  it("refuses keys of types twinlock does not accept (P-384, X25519, RSA-1024), and malformed key lines", () => {
    const good = bytesOf(alice);
    const lines = [
      generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey,
      generateKeyPairSync("x25519").publicKey,
      generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey,
    ].map((k) => `${WEBAUTHN_KEY_PREFIX}${k.export({ type: "spki", format: "der" }).toString("base64")}`);
    lines.push(
      "webauthn:",
      "webauthn:@@@",
      alice.keyLine.replace("webauthn:", "ed25519:"),
      `${alice.keyLine}=`,
      `${alice.keyLine.slice(0, -8)}`,
    );
    for (const publicKey of lines) {
      const verdict = verifyWebAuthnAssertion({ ...good, publicKey }, expect_);
      expect(verdict.ok ? "ok" : verdict.code, publicKey).toBe("bad-key");
    }
  });

  it("refuses client data that is not a UTF-8 JSON object", () => {
    for (const text of [Buffer.from("[]"), Buffer.from("null"), Buffer.from("{"), Buffer.from([0x7b, 0xff, 0x7d])]) {
      const verdict = verifyWebAuthnAssertion({ ...bytesOf(alice), clientDataJSON: text }, expect_);
      expect(verdict.ok ? "ok" : verdict.code).toBe("bad-client-data");
    }
  });

  it("refuses an assertion for another challenge", () => {
    const verdict = verifyWebAuthnAssertion(bytesOf(alice), { ...expect_, challenge: Buffer.alloc(32) });
    expect(verdict.ok ? "ok" : verdict.code).toBe("challenge-mismatch");
  });

  it("refuses when no origin is allowed", () => {
    const verdict = verifyWebAuthnAssertion(bytesOf(alice), { ...expect_, origins: [] });
    expect(verdict.ok ? "ok" : verdict.code).toBe("wrong-origin");
  });

  it("fails once any byte of the authenticator data, client data or signature is changed (property)", () => {
    for (const a of Object.values(authenticators)) {
      const good = bytesOf(a);
      expect(verifyWebAuthnAssertion(good, expect_)).toEqual({ ok: true });
      const field = fc.constantFrom("authenticatorData", "clientDataJSON", "signature") as fc.Arbitrary<
        "authenticatorData" | "clientDataJSON" | "signature"
      >;
      fc.assert(
        fc.property(field, fc.nat(), fc.integer({ min: 1, max: 255 }), (name, at, mask) => {
          const bytes = Buffer.from(good[name]);
          const i = at % bytes.length;
          bytes[i] = (bytes[i] ?? 0) ^ mask;
          expect(verifyWebAuthnAssertion({ ...good, [name]: bytes }, expect_).ok).toBe(false);
        }),
        { numRuns: 300 },
      );
    }
  });
});
