import type { KeyObject } from "node:crypto";
import { closeSync, fstatSync, readFileSync } from "node:fs";
import { loadNodeCrypto } from "../crypto/load-node-crypto.js";
import { UsageError } from "../errors/errors.js";
import { openRegularFile } from "../input/read-regular-file.js";
import { holdsKeyText } from "./key-text.js";

/** Public keys are written `ed25519:<base64 of the raw 32-byte key>` in twinlock.yaml and receipts. */
export const PUBLIC_KEY_PREFIX = "ed25519:";

/** A new Ed25519 key pair: the private key as PKCS#8 PEM (never printed) and the public key line. */
export function generateReviewerKey(): { privatePem: string; publicKey: string } {
  const { privateKey, publicKey } = loadNodeCrypto().generateKeyPairSync("ed25519");
  return { privatePem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), publicKey: publicKeyLine(publicKey) };
}

/** `ed25519:<base64>` of a public (or private) Ed25519 key. */
export function publicKeyLine(key: KeyObject): string {
  const pub = key.type === "private" ? loadNodeCrypto().createPublicKey(key) : key;
  // DER, not JWK: exporting a key as JWK can deadlock Node 20's crypto against the garbage collector (seen in keygen).
  const der = pub.asymmetricKeyType === "ed25519" ? pub.export({ type: "spki", format: "der" }) : undefined;
  if (!der || der.length !== ED25519_SPKI_PREFIX.length + 32 || !der.subarray(0, ED25519_SPKI_PREFIX.length).equals(ED25519_SPKI_PREFIX))
    throw new UsageError("the key is not an Ed25519 key; make one with `twinlock keygen`");
  return `${PUBLIC_KEY_PREFIX}${der.subarray(ED25519_SPKI_PREFIX.length).toString("base64")}`;
}

/** The DER (SubjectPublicKeyInfo) bytes before an Ed25519 key's raw 32 bytes (RFC 8410). */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** The KeyObject of a public key line, or undefined when the line is not a valid Ed25519 key. */
export function parsePublicKeyLine(line: string): KeyObject | undefined {
  if (!line.startsWith(PUBLIC_KEY_PREFIX)) return undefined;
  const raw = Buffer.from(line.slice(PUBLIC_KEY_PREFIX.length), "base64");
  if (raw.length !== 32 || raw.toString("base64") !== line.slice(PUBLIC_KEY_PREFIX.length)) return undefined;
  try {
    return loadNodeCrypto().createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: "der", type: "spki" });
  } catch {
    return undefined;
  }
}

/** Largest key file read; a PEM Ed25519 private key is 119 bytes. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/**
 * Load a private key file made by `twinlock keygen`; refuses one that others
 * can read, and a FIFO, socket, device or folder at once (see `openRegularFile`).
 * `what` names where the path came from, e.g. "key file named by TWINLOCK_KEY".
 */
export function loadPrivateKey(file: string, what = "key file"): KeyObject {
  const fix = "pass --key FILE made by `twinlock keygen`";
  // The key itself where its file's path belongs (`--key "$(cat alice.key)"`): never echoed, as every message below
  // would put the private key on the terminal and into every log of it.
  if (holdsKeyText(file))
    throw new UsageError(
      `the ${what} given is the text of a key (not shown here), not a path; save it to a file only you can read (chmod 600) and pass that file's path`,
    );
  const fd = openRegularFile(file, what, { fix });
  let text: string;
  try {
    // The mode and size are those of the file actually opened, not of whatever the path names a moment later.
    const stat = fstatSync(fd);
    if (stat.size > MAX_KEY_FILE_BYTES)
      throw new UsageError(`${what} ${file} is ${stat.size} bytes, over the ${MAX_KEY_FILE_BYTES}-byte limit for a key; ${fix}`);
    text = readFileSync(fd, "utf8");
    // A public key given by mistake is named as such, not as a private key others can read.
    if (text.trimStart().startsWith(PUBLIC_KEY_PREFIX) || text.includes("-----BEGIN PUBLIC KEY-----"))
      throw new UsageError(
        `${what} ${file} is a public key; --key takes the private key (NAME.key, not NAME.pub) made by \`twinlock keygen\``,
      );
    if ((stat.mode & 0o077) !== 0)
      throw new UsageError(`${what} ${file} can be read by other users (mode ${(stat.mode & 0o777).toString(8)}); run chmod 600 ${file}`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${what} ${file} (${(error as NodeJS.ErrnoException).code ?? "error"}); ${fix}`, { cause: error });
  } finally {
    closeSync(fd);
  }
  try {
    const key = loadNodeCrypto().createPrivateKey(text);
    if (key.asymmetricKeyType !== "ed25519") throw new Error("not Ed25519");
    return key;
  } catch (error) {
    throw new UsageError(`${what} ${file} is not an Ed25519 private key; make one with \`twinlock keygen --name NAME\``, { cause: error });
  }
}
