import type { KeyObject } from "node:crypto";
import { loadNodeCrypto } from "../crypto/load-node-crypto.js";
import { IntegrityError } from "../errors/errors.js";
import type { GateHome } from "../home/gate-home.js";
import { homeFilePath, readHomeText, updateHomeFile } from "../home/shared-home.js";
import { generateReviewerKey, publicKeyLine } from "./keys.js";

/** The gate's own private key in its home: PKCS#8 PEM, mode 0600 (in a team store, a row of its database, copied so). */
export const GATE_KEY_FILE = "gate-key.pem";

/** A gate's signing identity: its Ed25519 private key (never printed) and its public key line, as verifiers pin it. */
export interface GateKey {
  privateKey: KeyObject;
  /** `ed25519:<base64>`: what `trust gate-key` prints and `gate_keys:` lists. */
  publicKey: string;
}

/** The gate's key if its home (or its team database's copy) has one; never makes one. */
export function readGateKey(home: GateHome): GateKey | undefined {
  const file = homeFilePath(home, GATE_KEY_FILE);
  const text = readHomeText(file);
  if (text === undefined) return undefined;
  return parseGateKey(text, `${file}`);
}

/**
 * The gate's key, made once when the home has none. It is created under the
 * trust file's lock (the folder's lock file, or the database's advisory lock
 * and row), written atomically and durably, 0600: of two processes racing to
 * make it, the second finds the first's and both sign with that one.
 */
export async function ensureGateKey(home: GateHome): Promise<GateKey> {
  await home.shared?.refresh();
  const known = readGateKey(home);
  if (known) return known;
  const text = await updateHomeFile(home, GATE_KEY_FILE, (current) => {
    const pem = current ?? generateReviewerKey().privatePem;
    return { text: pem, result: pem };
  });
  return parseGateKey(text, homeFilePath(home, GATE_KEY_FILE));
}

const parsed = new Map<string, GateKey>();

function parseGateKey(text: string, where: string): GateKey {
  const cached = parsed.get(text);
  if (cached) return cached;
  let key: KeyObject;
  try {
    key = loadNodeCrypto().createPrivateKey(text);
    if (key.asymmetricKeyType !== "ed25519") throw new Error("not Ed25519");
  } catch (error) {
    throw new IntegrityError(`the gate's key ${where} is not an Ed25519 private key; the gate home was damaged — restore it from backup`, {
      check: "gate-key",
      cause: error,
    });
  }
  const gate = { privateKey: key, publicKey: publicKeyLine(key) };
  if (parsed.size > 100) parsed.clear();
  parsed.set(text, gate);
  return gate;
}
