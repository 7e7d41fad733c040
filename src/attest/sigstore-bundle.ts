import type { DsseEnvelope } from "./dsse-envelope.js";

/** The Sigstore bundle v0.3 media type. */
export const SIGSTORE_BUNDLE_V03 = "application/vnd.dev.sigstore.bundle.v0.3+json";

/** A Sigstore bundle v0.3 (JSON form) holding a DSSE envelope, verified by a public key named by a hint. */
export interface SigstoreBundle {
  mediaType: typeof SIGSTORE_BUNDLE_V03;
  verificationMaterial: {
    publicKey: { hint: string };
    tlogEntries: [];
    timestampVerificationData: { rfc3161Timestamps: [] };
  };
  dsseEnvelope: DsseEnvelope;
}

/**
 * The DSSE envelope as a Sigstore bundle v0.3 with a public-key hint and no
 * transparency log entry or timestamp: a verifier must know the key the hint
 * names (twinlock uses the key's `ed25519:` line), and nothing in the bundle
 * proves when it was signed.
 */
export function toSigstoreBundle(envelope: DsseEnvelope, hint: string): SigstoreBundle {
  return {
    mediaType: SIGSTORE_BUNDLE_V03,
    verificationMaterial: { publicKey: { hint }, tlogEntries: [], timestampVerificationData: { rfc3161Timestamps: [] } },
    dsseEnvelope: envelope,
  };
}
