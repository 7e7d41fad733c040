import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { CONFIG_FILE } from "../suite/suite-config.js";

/** The sha256 of a suite's `twinlock.yaml` bytes, as a pin records it (the policy digest receipts bind). */
export function configDigest(root: string): string {
  return `sha256:${createHash("sha256")
    .update(readFileSync(path.join(root, CONFIG_FILE)))
    .digest("hex")}`;
}
