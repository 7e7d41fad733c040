import { createPublicKey, type KeyObject } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { RefusalError } from "../errors/errors.js";
import { webauthnAlgorithmOf } from "./webauthn-key-line.js";

/** COSE algorithm IDs twinlock accepts for passkeys (RFC 9053): ES256, EdDSA (Ed25519), RS256. */
export const PASSKEY_COSE_ALGORITHMS = [-7, -8, -257] as const;

/** The DER before a P-256 key's uncompressed point `04 || x || y` (RFC 5480). */
const P256_SPKI_PREFIX = Buffer.from("3059301306072a8648ce3d020106082a8648ce3d030107034200", "hex");
/** The DER before an Ed25519 key's raw 32 bytes (RFC 8410). */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/**
 * The node public key of a COSE_Key (RFC 9052 §7), as
 * `verifyRegistrationResponse` returns it in `registrationInfo.credential.publicKey`:
 * EC2 P-256 with ES256, OKP Ed25519 with EdDSA, or RSA with RS256. Anything
 * else (another curve, another algorithm, a short RSA key) is a RefusalError.
 */
export function coseToPublicKey(cose: Uint8Array): KeyObject {
  let map: unknown;
  try {
    map = isoCBOR.decodeFirst(new Uint8Array(cose));
  } catch (error) {
    throw new RefusalError("the passkey's public key is not valid CBOR", {}, { cause: error });
  }
  if (!(map instanceof Map)) throw new RefusalError("the passkey's public key is not a COSE key map");
  const kty = map.get(1);
  const alg = map.get(3);
  let key: KeyObject;
  try {
    if (kty === 2 && alg === -7 && map.get(-1) === 1) {
      const x = bytes(map.get(-2), 32);
      const y = bytes(map.get(-3), 32);
      key = createPublicKey({ key: Buffer.concat([P256_SPKI_PREFIX, Buffer.from([4]), x, y]), format: "der", type: "spki" });
    } else if (kty === 1 && alg === -8 && map.get(-1) === 6) {
      key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, bytes(map.get(-2), 32)]), format: "der", type: "spki" });
    } else if (kty === 3 && alg === -257) {
      // Importing from JWK is safe; only exporting to JWK can deadlock Node 20.
      const n = Buffer.from(bytes(map.get(-1))).toString("base64url");
      const e = Buffer.from(bytes(map.get(-2))).toString("base64url");
      key = createPublicKey({ key: { kty: "RSA", n, e }, format: "jwk" });
    } else {
      throw new RefusalError(
        `the passkey's key type ${String(kty)} with algorithm ${String(alg)} is not accepted; twinlock accepts ES256 (P-256), EdDSA (Ed25519) and RS256`,
      );
    }
  } catch (error) {
    if (error instanceof RefusalError) throw error;
    throw new RefusalError("the passkey's public key is malformed (a point not on the curve, or a wrong length)", {}, { cause: error });
  }
  if (!webauthnAlgorithmOf(key)) throw new RefusalError("the passkey's RSA key is shorter than 2048 bits");
  return key;
}

/** The SubjectPublicKeyInfo DER of a COSE_Key (see `coseToPublicKey`). */
export function coseToSpki(cose: Uint8Array): Buffer {
  return coseToPublicKey(cose).export({ type: "spki", format: "der" });
}

function bytes(value: unknown, length?: number): Uint8Array {
  if (!(value instanceof Uint8Array) || (length !== undefined && value.length !== length))
    throw new RefusalError(`the passkey's public key has a field that is not a ${length ? `${length}-byte ` : ""}byte string`);
  return value;
}
