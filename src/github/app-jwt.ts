import { createPrivateKey, createSign, type KeyObject } from "node:crypto";
import { UsageError } from "../errors/errors.js";

/** Base64url without padding (RFC 7515 §2). */
function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString("base64url");
}

/**
 * A GitHub App's JSON Web Token (RS256, RFC 7519): `iat` a minute back for
 * clock drift, `exp` nine minutes on (GitHub takes at most ten), `iss` the
 * app's ID. It only buys installation tokens; it never reaches a repository.
 */
export function signAppJwt(appId: string, key: KeyObject, nowMs: number): string {
  const now = Math.floor(nowMs / 1000);
  const header = base64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
  const payload = base64url(JSON.stringify({ iat: now - 60, exp: now + 540, iss: appId }));
  const signer = createSign("RSA-SHA256");
  signer.update(`${header}.${payload}`);
  return `${header}.${payload}.${base64url(signer.sign(key))}`;
}

/** The app's private key from its PEM text: an RSA key, or a UsageError naming the option. */
export function parseAppPrivateKey(pem: Buffer, option: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new UsageError(`${option} is not a PEM private key; give the .pem file GitHub made for the app`);
  }
  if (key.asymmetricKeyType !== "rsa")
    throw new UsageError(`${option} is a ${key.asymmetricKeyType} key; a GitHub App's key is RSA (the .pem file GitHub made for the app)`);
  return key;
}
