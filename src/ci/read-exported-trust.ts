import { readFileSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../errors/errors.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { type ExportedTrust, ExportedTrustSchema, trustConfigOf } from "./exported-trust.js";
import { looksLikeSignedTrust, MAX_TRUST_FILE_BYTES, openSignedTrust, pinnerKeysOf } from "./signed-trust.js";

/**
 * A trust file in the export format (`export --out` writes one as trust.json),
 * or a pinner-signed one (`trust export`, opened under `pinnerKey`),
 * as the config judgeReceiptTrust takes. The caller names it: the one beside
 * an export came with it, and whoever could write the export could write it.
 */
export function readExportedTrust(given: string, pinnerKey?: string): { trust: ExportedTrust; config: SuiteConfig; file: string } {
  const file = path.resolve(given);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === "ENOENT"
        ? `--trust ${given} does not exist; give a trust.json that \`twinlock export --out DIR\` wrote for you (or your team keeps where the agent cannot write)`
        : `cannot read --trust ${given} (${code}); give a trust.json written by \`twinlock export --out DIR\``,
    );
  }
  if (text.length > MAX_TRUST_FILE_BYTES)
    throw new UsageError(`--trust ${given} is over ${MAX_TRUST_FILE_BYTES} bytes; give the file the gate wrote`);
  // A pinner-signed trust file (`trust export`) opens under the pinner's key; the unsigned export format stands on who kept it.
  if (looksLikeSignedTrust(text)) {
    if (pinnerKey === undefined)
      throw new UsageError(`--trust ${given} is a signed trust file; give --pinner-key FILE, the public key of the pinner who exported it`);
    const pinners = pinnerKeysOf(readFileSync(path.resolve(pinnerKey), "utf8"), pinnerKey);
    return { ...openSignedTrust(text, file, pinners), file };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`cannot read --trust ${given} (not JSON); give a trust.json written by \`twinlock export --out DIR\``);
  }
  const parsed = ExportedTrustSchema.safeParse(json);
  if (!parsed.success)
    throw new UsageError(
      `--trust ${given} is not a twinlock export's trust file; give the trust.json \`twinlock export --out DIR\` writes`,
    );
  const trust = parsed.data;
  return { trust, config: trustConfigOf(trust), file };
}
