import "../schemas/zod-setup.js";
import type { KeyObject } from "node:crypto";
import { z } from "zod/mini";
import { canonicalJson } from "../crypto/canonical-hash.js";
import { loadNodeCrypto } from "../crypto/load-node-crypto.js";
import { RefusalError, UsageError } from "../errors/errors.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { parsePublicKeyLine, publicKeyLine } from "../trust/keys.js";
import { type ExportedTrust, ExportedTrustSchema, trustConfigOf } from "./exported-trust.js";

/** The format of a trust file `twinlock trust export` writes: everything a gate trusts, signed by one of its pinners. */
export const SIGNED_TRUST_FORMAT = "twinlock-signed-trust/1";

/** Most bytes a trust file may have: read before it is parsed. */
export const MAX_TRUST_FILE_BYTES = 4 * 1024 * 1024;

const SignedTrustSchema = z.strictObject({
  format: z.literal(SIGNED_TRUST_FORMAT),
  trust: ExportedTrustSchema,
  /** The pinner's public key (`ed25519:…`). */
  signed_by: z.string().check(z.maxLength(200)),
  /** Ed25519 over the domain line and the canonical JSON of `trust`, base64. */
  signature: z.string().check(z.maxLength(200)),
});
export type SignedTrust = z.infer<typeof SignedTrustSchema>;

/** What is signed: a domain line, so no other twinlock signature can be replayed as a trust file's. */
function signedBytes(trust: ExportedTrust): Buffer {
  return Buffer.from(`${SIGNED_TRUST_FORMAT}\n${canonicalJson(trust)}`, "utf8");
}

/** `trust`, signed by the pinner's private key. */
export function signTrust(trust: ExportedTrust, pinner: KeyObject): SignedTrust {
  const signature = loadNodeCrypto().sign(null, signedBytes(trust), pinner).toString("base64");
  return { format: SIGNED_TRUST_FORMAT, trust, signed_by: publicKeyLine(pinner), signature };
}

/** Whether `text` is a signed trust file (JSON naming the format), so a reader can tell it from a twinlock.yaml. */
export function looksLikeSignedTrust(text: string): boolean {
  return text.trimStart().startsWith("{") && text.includes(SIGNED_TRUST_FORMAT);
}

/**
 * The trust a signed trust file holds, once its signature checks under one
 * of the pinned pinner keys (`pinners`, from where the agent cannot write:
 * the base commit in CI). `source` names where the bytes came from in every
 * refusal.
 */
export function openSignedTrust(text: string, source: string, pinners: readonly string[]): { trust: ExportedTrust; config: SuiteConfig } {
  if (Buffer.byteLength(text, "utf8") > MAX_TRUST_FILE_BYTES)
    throw new UsageError(`the trust file ${source} is over ${MAX_TRUST_FILE_BYTES} bytes; give the file \`twinlock trust export\` wrote`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`the trust file ${source} is not JSON; give the file \`twinlock trust export --out FILE\` wrote`);
  }
  const parsed = SignedTrustSchema.safeParse(json);
  if (!parsed.success)
    throw new UsageError(
      `the trust file ${source} is not a signed trust file (${SIGNED_TRUST_FORMAT}); write it with \`twinlock trust export --out FILE --key PINNER.key\``,
    );
  const doc = parsed.data;
  if (!pinners.includes(doc.signed_by))
    throw new RefusalError(
      `the trust file ${source} is signed by ${doc.signed_by}, which is not the pinner key given; export it again with the pinner's key, or pin that key where the agent cannot write`,
      { attack: "trust-file-signer" },
    );
  const key = parsePublicKeyLine(doc.signed_by);
  let ok = false;
  try {
    ok = key !== undefined && loadNodeCrypto().verify(null, signedBytes(doc.trust), key, Buffer.from(doc.signature, "base64"));
  } catch {
    ok = false;
  }
  if (!ok)
    throw new RefusalError(
      `the trust file ${source} does not match its signature: it was changed after \`twinlock trust export\` wrote it; export it again`,
      { attack: "trust-file-edited" },
    );
  if (doc.trust.reviewers.length === 0)
    throw new UsageError(`the trust file ${source} lists no reviewers; enrol or list them in the gate, then export it again`);
  return { trust: doc.trust, config: trustConfigOf(doc.trust) };
}

/** The pinner keys a pinner key file names: its `ed25519:` lines (others, and `#` comments, ignored), or a clear refusal. */
export function pinnerKeysOf(text: string, source: string): string[] {
  if (text.length > 64 * 1024) throw new UsageError(`the pinner key file ${source} is over 64 KiB; give the file of public key lines`);
  const keys = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  const bad = keys.find((k) => parsePublicKeyLine(k) === undefined);
  if (bad !== undefined || keys.length === 0)
    throw new UsageError(
      `the pinner key file ${source} holds ${keys.length === 0 ? "no key" : "a line that is not an ed25519: public key"}; give the public key \`twinlock keygen\` printed for the pinner, one per line`,
    );
  return keys;
}
