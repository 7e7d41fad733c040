import type * as Crypto from "node:crypto";
import { createRequire } from "node:module";

let crypto: typeof Crypto | undefined;

/**
 * `node:crypto`, loaded on first use: loading it costs a few milliseconds,
 * and a `validate` without a gate home or a stateless `pair-status` never
 * hashes. The one-file build sees the literal `require` and keeps it; run as
 * ES modules, it is required through `createRequire`.
 */
export function loadNodeCrypto(): typeof Crypto {
  crypto ??= (typeof require === "function" ? require("node:crypto") : createRequire(import.meta.url)("node:crypto")) as typeof Crypto;
  return crypto;
}
