import type { KeyObject } from "node:crypto";
import { loadPrivateKey } from "./keys.js";

/** The signing key from `--key FILE`, else the file named by TWINLOCK_KEY, else none. */
export function keyOption(file: string | undefined): KeyObject | undefined {
  if (file !== undefined) return file === "" ? undefined : loadPrivateKey(file);
  const fromEnv = process.env.TWINLOCK_KEY;
  // Say where the path came from: a stale TWINLOCK_KEY is easy to forget.
  return fromEnv === undefined || fromEnv === "" ? undefined : loadPrivateKey(fromEnv, "key file named by TWINLOCK_KEY");
}
