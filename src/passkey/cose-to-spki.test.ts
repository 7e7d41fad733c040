import { generateKeyPairSync } from "node:crypto";
import { generateRegistrationOptions, verifyRegistrationResponse } from "@simplewebauthn/server";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { describe, expect, it } from "vitest";
import { RefusalError } from "../errors/errors.js";
import { coseToPublicKey, coseToSpki, PASSKEY_COSE_ALGORITHMS } from "./cose-to-spki.js";
import { SoftwareAuthenticator, type SoftwareKeyType } from "./software-authenticator.js";
import { webauthnKeyLine } from "./webauthn-key-line.js";

const ORIGIN = "http://localhost:7420";

async function registeredCoseKey(a: SoftwareAuthenticator): Promise<Uint8Array> {
  const options = await generateRegistrationOptions({
    rpName: "twinlock",
    rpID: "localhost",
    userName: "alice",
    attestationType: "none",
    supportedAlgorithmIDs: [...PASSKEY_COSE_ALGORITHMS],
  });
  const result = await verifyRegistrationResponse({
    response: a.register(options, ORIGIN),
    expectedChallenge: options.challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: "localhost",
    requireUserVerification: true,
    supportedAlgorithmIDs: [...PASSKEY_COSE_ALGORITHMS],
  });
  if (!result.verified) throw new Error("not verified");
  return result.registrationInfo.credential.publicKey;
}

function cose(entries: Array<[number, number | Uint8Array]>): Uint8Array {
  return isoCBOR.encode(new Map(entries));
}

describe("coseToPublicKey", () => {
  for (const type of ["ES256", "EdDSA", "RS256"] as SoftwareKeyType[]) {
    it(`turns the COSE key simplewebauthn returns for an ${type} passkey into that passkey's own key`, async () => {
      const a = new SoftwareAuthenticator(type);
      const key = coseToPublicKey(await registeredCoseKey(a));
      expect(webauthnKeyLine(key)).toBe(a.keyLine);
      expect(coseToSpki(await registeredCoseKey(a)).equals(a.publicKey.export({ type: "spki", format: "der" }))).toBe(true);
    });
  }

  it("refuses other curves and algorithms (P-384, PS256, secp256k1) with the accepted list", () => {
    const x = new Uint8Array(48);
    for (const key of [
      cose([
        [1, 2],
        [3, -35],
        [-1, 2],
        [-2, x],
        [-3, x],
      ]),
      cose([
        [1, 3],
        [3, -37],
        [-1, new Uint8Array(256).fill(1)],
        [-2, new Uint8Array([1, 0, 1])],
      ]),
      cose([
        [1, 2],
        [3, -47],
        [-1, 8],
        [-2, new Uint8Array(32)],
        [-3, new Uint8Array(32)],
      ]),
    ])
      expect(() => coseToPublicKey(key)).toThrow(/ES256 \(P-256\), EdDSA \(Ed25519\) and RS256/);
  });

  it("refuses a P-256 point that is not on the curve, and coordinates of the wrong length", () => {
    const bad = cose([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(32).fill(1)],
      [-3, new Uint8Array(32).fill(2)],
    ]);
    expect(() => coseToPublicKey(bad)).toThrow(RefusalError);
    const short = cose([
      [1, 1],
      [3, -8],
      [-1, 6],
      [-2, new Uint8Array(31)],
    ]);
    expect(() => coseToPublicKey(short)).toThrow(/32-byte/);
  });

  it("refuses an RSA key shorter than 2048 bits", () => {
    const der = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ type: "pkcs1", format: "der" });
    // RSAPublicKey of a 1024-bit key: 30 81 89 02 81 81 00 <n: 128 bytes> 02 03 <e>
    const n = new Uint8Array(der.subarray(7, 7 + 128));
    const e = new Uint8Array(der.subarray(der.length - 3));
    expect(() =>
      coseToPublicKey(
        cose([
          [1, 3],
          [3, -257],
          [-1, n],
          [-2, e],
        ]),
      ),
    ).toThrow(/2048/);
  });

  it("refuses bytes that are not a CBOR map", () => {
    expect(() => coseToPublicKey(new Uint8Array([0xff, 0x00]))).toThrow(RefusalError);
    expect(() => coseToPublicKey(isoCBOR.encode([1, 2]))).toThrow(/COSE key map/);
  });
});
