import type { KeyObject } from "node:crypto";
import { IntegrityError, RefusalError, UsageError } from "../errors/errors.js";
import type { RunFile } from "../run/run-schema.js";
import { ensureGateKey } from "../trust/gate-key.js";
import { requireGateSigned, trustedGateKeys } from "../trust/gate-statement.js";
import { parsePublicKeyLine, publicKeyLine } from "../trust/keys.js";
import { type GateHome, homeLabel } from "./gate-home.js";
import { homeFilePath, readHomeText, updateHomeFile } from "./shared-home.js";
import { listPinners, loadPinnedPolicy } from "./suite-pins.js";

/** The trust file of the other gates this home (or team store) takes runs from: `twinlock trust add-gate-key`. */
export const TRUSTED_GATE_KEYS_FILE = "gate-keys.json";

/** One gate this home trusts, as a person pinned it. */
export interface TrustedGateKey {
  name: string;
  public_key: string;
  added_at: string;
  added_by: string;
}

interface GateKeysFile {
  format: "twinlock-gate-keys/1";
  gate_keys: TrustedGateKey[];
}

/** The gates this home trusts besides itself (for `import` and `attest`), as its pinners added them. */
export function listTrustedGateKeys(home: GateHome): TrustedGateKey[] {
  return parseFile(readHomeText(homeFilePath(home, TRUSTED_GATE_KEYS_FILE)), home).gate_keys;
}

/**
 * Trust another gate's key in this home: its signed runs may be imported
 * here. Only a pinner may (the pins and this list decide what the home takes
 * as evidence); adding a key twice renames it.
 */
export async function addTrustedGateKey(
  home: GateHome,
  entry: { name: string; publicKey: string },
  key: KeyObject | undefined,
  now = new Date(),
): Promise<TrustedGateKey[]> {
  if (!parsePublicKeyLine(entry.publicKey))
    throw new UsageError(
      `${entry.publicKey.slice(0, 40)} is not an ed25519: public key line; paste what \`twinlock trust gate-key\` printed on that gate`,
    );
  if (!key)
    throw new RefusalError(
      "to trust a gate key, sign with a pinner's key (--key FILE): the gates a home trusts decide what it takes as evidence",
      { code: "NOT_PINNER", attack: "unauthorized-pin" },
    );
  const by = publicKeyLine(key);
  await home.shared?.refresh();
  const pinners = listPinners(home);
  if (!pinners.includes(by))
    throw new RefusalError(
      `refused: only the gate home's pinners may trust a gate key${pinners.length === 0 ? " (this home has none yet: pin a suite first)" : ""}, and key ${by.slice(0, 20)}… is not one`,
      { code: "NOT_PINNER", attack: "unauthorized-pin" },
    );
  return updateHomeFile(home, TRUSTED_GATE_KEYS_FILE, (text) => {
    const file = parseFile(text, home);
    const kept = file.gate_keys.filter((g) => g.public_key !== entry.publicKey);
    const gate_keys = [...kept, { name: entry.name, public_key: entry.publicKey, added_at: now.toISOString(), added_by: by }];
    return { text: `${JSON.stringify({ format: "twinlock-gate-keys/1", gate_keys }, null, 1)}\n`, result: gate_keys };
  });
}

function parseFile(text: string | undefined, home: GateHome): GateKeysFile {
  if (text === undefined) return { format: "twinlock-gate-keys/1", gate_keys: [] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const file = json as Partial<GateKeysFile> | undefined;
  if (
    file?.format !== "twinlock-gate-keys/1" ||
    !Array.isArray(file.gate_keys) ||
    !file.gate_keys.every((g) => typeof g?.name === "string" && typeof g.public_key === "string" && parsePublicKeyLine(g.public_key))
  )
    throw new IntegrityError(
      `${homeFilePath(home, TRUSTED_GATE_KEYS_FILE)} is damaged; restore the gate home's ${TRUSTED_GATE_KEYS_FILE} from backup`,
      { code: "HOME_DAMAGED" },
    );
  return file as GateKeysFile;
}

/**
 * Throw unless a run made elsewhere is under the signatures of a gate this
 * store trusts: its own key, its `trust add-gate-key` list, and the
 * `gate_keys:` of its pin of the run's suite (the head and every record the
 * gate makes; see `judgeGateSignatures`). Every import checks this before it
 * keeps anything: a chain rebuilt from genuine receipts is not evidence.
 */
export async function requireTrustedGateSignatures(home: GateHome, file: RunFile): Promise<void> {
  const own = await ensureGateKey(home);
  const pinned = loadPinnedPolicy(home, file.state.suite);
  const trusted = trustedGateKeys(pinned.config, own.publicKey, ...listTrustedGateKeys(home).map((g) => g.public_key));
  requireGateSigned(
    file,
    trusted,
    `import refused (gate signature; trusted: this store's own key, its trust add-gate-key list and the gate_keys of the pin of ${pinned.pin.suite_id} in ${homeLabel(home)})`,
  );
}
