import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseWebAuthnKeyLine, WEBAUTHN_KEY_PREFIX, webauthnKeyLine } from "./webauthn-key-line.js";

describe("webauthn key lines", () => {
  it("round-trip P-256, Ed25519 and RSA keys with their algorithm", () => {
    const cases = [
      [generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey, "ES256"],
      [generateKeyPairSync("ed25519").publicKey, "EdDSA"],
      [generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey, "RS256"],
    ] as const;
    for (const [key, algorithm] of cases) {
      const line = webauthnKeyLine(key);
      expect(line.startsWith(WEBAUTHN_KEY_PREFIX)).toBe(true);
      const parsed = parseWebAuthnKeyLine(line);
      expect(parsed?.algorithm).toBe(algorithm);
      expect(parsed?.key.equals(key)).toBe(true);
    }
  });

  it("refuses to write a line for a key type passkeys do not use", () => {
    expect(() => webauthnKeyLine(generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey)).toThrow(/P-256/);
    expect(() => webauthnKeyLine(generateKeyPairSync("ed25519").privateKey)).toThrow(/public key/);
  });

  it("reads a P-256 key only in its uncompressed canonical DER, so one key has one line", () => {
    const key = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey;
    const compressed = key.export({ type: "spki", format: "der" });
    // A compressed point (02/03 || x) is the same key spelled differently.
    const point = compressed.subarray(compressed.length - 65);
    const y = point.subarray(33);
    const shortDer = Buffer.concat([
      Buffer.from("3039301306072a8648ce3d020106082a8648ce3d030107032200", "hex"),
      Buffer.from([(y[31] ?? 0) & 1 ? 3 : 2]),
      point.subarray(1, 33),
    ]);
    expect(parseWebAuthnKeyLine(`${WEBAUTHN_KEY_PREFIX}${shortDer.toString("base64")}`)).toBeUndefined();
  });
});
