import { type KeyObject, sign, verify } from "node:crypto";

/** A DSSE envelope in its JSON form (https://github.com/secure-systems-lab/dsse/blob/master/envelope.md). */
export interface DsseEnvelope {
  /** base64 of the serialized body. */
  payload: string;
  payloadType: string;
  signatures: Array<{ keyid?: string; sig: string }>;
}

/**
 * Per the DSSE protocol, the Pre-Authentication Encoding:
 * `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, lengths as ASCII
 * decimal byte counts. This, and never the bare payload, is what is signed.
 */
export function preAuthEncoding(payloadType: string, payload: Uint8Array): Buffer {
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), Buffer.from(payload)]);
}

/** Sign `payload` as a one-signature DSSE envelope with an Ed25519 (or ECDSA P-256, SHA-256) private key. */
export function signDsseEnvelope(payloadType: string, payload: Uint8Array, key: KeyObject, keyid?: string): DsseEnvelope {
  const sig = sign(digestFor(key), preAuthEncoding(payloadType, payload), { key, dsaEncoding: "ieee-p1363" });
  return {
    payload: Buffer.from(payload).toString("base64"),
    payloadType,
    signatures: [{ ...(keyid ? { keyid } : {}), sig: sig.toString("base64") }],
  };
}

/** What a DSSE check found: the payload and which of the given keys signed it, or why none did. */
export type DsseVerdict = { ok: true; payloadType: string; payload: Buffer; signers: string[] } | { ok: false; reason: string };

/**
 * Per the DSSE protocol's verification steps: decode the payload, rebuild
 * the PAE from the envelope's own type and bytes, and accept the envelope
 * when at least one signature verifies under one of the named public keys
 * (Ed25519, or ECDSA P-256 with SHA-256 and r‖s signatures as the spec's
 * test vector uses). Never throws on a malformed envelope.
 */
export function verifyDsseEnvelope(envelope: unknown, keys: ReadonlyMap<string, KeyObject>): DsseVerdict {
  const e = envelope as Partial<DsseEnvelope> | null;
  if (!e || typeof e.payload !== "string" || typeof e.payloadType !== "string" || !Array.isArray(e.signatures))
    return { ok: false, reason: "not a DSSE envelope (payload, payloadType and signatures are required)" };
  const payload = strictBase64(e.payload);
  if (!payload) return { ok: false, reason: "the payload is not base64" };
  const pae = preAuthEncoding(e.payloadType, payload);
  const signers: string[] = [];
  for (const s of e.signatures) {
    const sig = typeof s?.sig === "string" ? strictBase64(s.sig) : undefined;
    if (!sig) continue;
    for (const [name, key] of keys) {
      if (signers.includes(name)) continue;
      try {
        if (verify(digestFor(key), pae, { key, dsaEncoding: "ieee-p1363" }, sig)) signers.push(name);
      } catch {
        // A signature of the wrong shape for this key type is simply not this key's.
      }
    }
  }
  if (signers.length === 0) return { ok: false, reason: "no signature verifies under a trusted key" };
  return { ok: true, payloadType: e.payloadType, payload, signers };
}

/** Ed25519 signs the message itself; ECDSA needs the digest named. */
function digestFor(key: KeyObject): string | null {
  return key.asymmetricKeyType === "ed25519" ? null : "sha256";
}

/** Standard or URL-safe base64 (DSSE accepts both), or undefined for anything else. */
function strictBase64(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) return undefined;
  return Buffer.from(text.replace(/-/g, "+").replace(/_/g, "/"), "base64");
}
