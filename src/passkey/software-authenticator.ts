import { constants, createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { webauthnKeyLine } from "./webauthn-key-line.js";

/** The key types a software authenticator can hold, by their WebAuthn algorithm. */
export type SoftwareKeyType = "ES256" | "EdDSA" | "RS256";

/** Ways to make a response wrong on purpose, for tests of the checks that must refuse it. */
export interface AuthenticatorTweaks {
  /** Leave the UV flag off (default: on). */
  userVerified?: boolean;
  /** Leave the UP flag off (default: on). */
  userPresent?: boolean;
  /** Hash this RP ID into the authenticator data instead of the real one. */
  rpId?: string;
  /** Claim this origin in the client data instead of the real one. */
  origin?: string;
  /** Claim this client data type (default: webauthn.create / webauthn.get). */
  type?: string;
  /** Set `crossOrigin` in the client data. */
  crossOrigin?: boolean;
}

/**
 * A tiny WebAuthn authenticator in node:crypto for tests without a browser:
 * one credential (P-256, Ed25519 or RSA-2048) that answers registration with
 * "none" attestation and assertions with user presence and verification.
 */
export class SoftwareAuthenticator {
  /** The credential ID, base64url. */
  readonly credentialId: string;
  private readonly privateKey: KeyObject;
  /** The credential's public key. */
  readonly publicKey: KeyObject;
  private signCount = 0;

  constructor(readonly keyType: SoftwareKeyType = "ES256") {
    const pair =
      keyType === "ES256"
        ? generateKeyPairSync("ec", { namedCurve: "P-256" })
        : keyType === "EdDSA"
          ? generateKeyPairSync("ed25519")
          : generateKeyPairSync("rsa", { modulusLength: 2048 });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
    this.credentialId = randomBytes(16).toString("base64url");
  }

  /** The credential's `webauthn:` key line. */
  get keyLine(): string {
    return webauthnKeyLine(this.publicKey);
  }

  /** Answer `navigator.credentials.create()` for these options on `origin`, as the browser's JSON. */
  register(options: PublicKeyCredentialCreationOptionsJSON, origin: string, tweaks: AuthenticatorTweaks = {}): RegistrationResponseJSON {
    const clientDataJSON = this.clientData(tweaks.type ?? "webauthn.create", options.challenge, origin, tweaks);
    const credentialId = Buffer.from(this.credentialId, "base64url");
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credentialId.length);
    // Attested credential data (WebAuthn §6.5.1): a zero AAGUID, the ID's length and bytes, then the COSE key.
    const attested = Buffer.concat([Buffer.alloc(16), idLength, credentialId, Buffer.from(this.coseKey())]);
    const authData = this.authenticatorData(tweaks.rpId ?? options.rp.id ?? "", 0x40, tweaks, attested);
    const attestationObject = isoCBOR.encode(
      new Map<string, Uint8Array | string | Map<string, string>>([
        ["fmt", "none"],
        ["attStmt", new Map<string, string>()],
        ["authData", new Uint8Array(authData)],
      ]),
    );
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: "public-key",
      response: {
        clientDataJSON: clientDataJSON.toString("base64url"),
        attestationObject: Buffer.from(attestationObject).toString("base64url"),
        transports: ["internal"],
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform",
    };
  }

  /** Answer `navigator.credentials.get()` for `challenge` (bytes, or base64url) on `rpId` and `origin`, as the browser's JSON. */
  assert(
    challenge: Uint8Array | string,
    rp: { rpId: string; origin: string },
    tweaks: AuthenticatorTweaks = {},
  ): AuthenticationResponseJSON {
    const encoded = typeof challenge === "string" ? challenge : Buffer.from(challenge).toString("base64url");
    const clientDataJSON = this.clientData(tweaks.type ?? "webauthn.get", encoded, tweaks.origin ?? rp.origin, tweaks);
    const authData = this.authenticatorData(tweaks.rpId ?? rp.rpId, 0, tweaks);
    const signed = Buffer.concat([authData, createHash("sha256").update(clientDataJSON).digest()]);
    const signature =
      this.keyType === "EdDSA"
        ? sign(null, signed, this.privateKey)
        : this.keyType === "ES256"
          ? sign("sha256", signed, { key: this.privateKey, dsaEncoding: "der" })
          : sign("sha256", signed, { key: this.privateKey, padding: constants.RSA_PKCS1_PADDING });
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: "public-key",
      response: {
        clientDataJSON: clientDataJSON.toString("base64url"),
        authenticatorData: authData.toString("base64url"),
        signature: signature.toString("base64url"),
      },
      clientExtensionResults: {},
    };
  }

  private clientData(type: string, challenge: string, origin: string, tweaks: AuthenticatorTweaks): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: tweaks.origin ?? origin, crossOrigin: tweaks.crossOrigin ?? false }));
  }

  /** rpIdHash || flags || signCount || extra (WebAuthn §6.1). */
  private authenticatorData(rpId: string, extraFlags: number, tweaks: AuthenticatorTweaks, extra: Buffer = Buffer.alloc(0)): Buffer {
    const flags = (tweaks.userPresent === false ? 0 : 0x01) | (tweaks.userVerified === false ? 0 : 0x04) | extraFlags;
    const count = Buffer.alloc(4);
    count.writeUInt32BE(++this.signCount);
    return Buffer.concat([createHash("sha256").update(rpId).digest(), Buffer.from([flags]), count, extra]);
  }

  /** The public key as a COSE_Key map (RFC 9052 §7), from its DER (never via JWK export, which can deadlock Node 20). */
  private coseKey(): Uint8Array {
    if (this.keyType === "RS256") {
      const [n, e] = derIntegers(this.publicKey.export({ type: "pkcs1", format: "der" }));
      return isoCBOR.encode(
        new Map<number, number | Uint8Array>([
          [1, 3],
          [3, -257],
          [-1, n],
          [-2, e],
        ]),
      );
    }
    const spki = this.publicKey.export({ type: "spki", format: "der" });
    if (this.keyType === "EdDSA")
      return isoCBOR.encode(
        new Map<number, number | Uint8Array>([
          [1, 1],
          [3, -8],
          [-1, 6],
          [-2, new Uint8Array(spki.subarray(spki.length - 32))],
        ]),
      );
    return isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, new Uint8Array(spki.subarray(spki.length - 64, spki.length - 32))],
        [-3, new Uint8Array(spki.subarray(spki.length - 32))],
      ]),
    );
  }
}

/** The two unsigned INTEGERs (n, e) of a PKCS#1 RSAPublicKey SEQUENCE, without sign-padding zeros. */
function derIntegers(der: Buffer): [Uint8Array, Uint8Array] {
  let at = 0;
  const length = (): number => {
    const first = der[at++] ?? 0;
    if (first < 0x80) return first;
    let value = 0;
    for (let i = 0; i < (first & 0x7f); i++) value = value * 256 + (der[at++] ?? 0);
    return value;
  };
  at++; // SEQUENCE tag
  length();
  const integer = (): Uint8Array => {
    at++; // INTEGER tag
    const size = length();
    let value = der.subarray(at, at + size);
    at += size;
    while (value.length > 1 && value[0] === 0) value = value.subarray(1);
    return new Uint8Array(value);
  };
  return [integer(), integer()];
}
