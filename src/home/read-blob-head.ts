import { closeSync, readSync } from "node:fs";
import { IntegrityError } from "../errors/errors.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { openRegularFileWithStats } from "../input/read-regular-file.js";
import { blobPath, blobReadFailure } from "./frozen-bytes.js";
import { type GateHome, homeLabel } from "./gate-home.js";

/**
 * The first `maxBytes` of a frozen file's bytes in the home, by one bounded
 * read: never the whole file, however large (a 560 MiB file is never one
 * string). The stored file must be the size the manifest records; its
 * sha256 is not checked here (that takes reading all of it; `readBlob`,
 * admission and checkout do), so a caller shows these bytes as a part only.
 */
export function readBlobHead(home: GateHome, entry: ManifestEntry, maxBytes: number): Buffer {
  let opened: ReturnType<typeof openRegularFileWithStats>;
  try {
    opened = openRegularFileWithStats(blobPath(home, entry.sha256), "frozen blob", { noFollow: true });
  } catch (error) {
    throw blobReadFailure(home, entry, error);
  }
  const { fd, stats } = opened;
  try {
    if (stats.size !== entry.size)
      throw new IntegrityError(
        `the frozen bytes of ${entry.path} in ${homeLabel(home)} are damaged (size ${stats.size}, frozen ${entry.size})`,
        { code: "FROZEN_DAMAGED", path: entry.path },
      );
    const want = Math.max(0, Math.min(maxBytes, entry.size));
    const buffer = Buffer.allocUnsafe(want);
    let total = 0;
    while (total < want) {
      const n = readSync(fd, buffer, total, want - total, total);
      if (n === 0) break;
      total += n;
    }
    return buffer.subarray(0, total);
  } finally {
    closeSync(fd);
  }
}
