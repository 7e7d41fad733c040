import type { KeyObject } from "node:crypto";
import { loadPrivateKey } from "./keys.js";

/** The signing key from `--key FILE`, else the file named by TWINLOCK_KEY, else none. */
export function keyOption(file: string | undefined): KeyObject | undefined {
  const path = file ?? process.env.TWINLOCK_KEY;
  return path === undefined || path === "" ? undefined : loadPrivateKey(path);
}
