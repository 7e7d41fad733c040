import "../schemas/zod-setup.js";
import { z } from "zod";

/** One manifest line: POSIX relative path, byte size, sha256 hex (SPEC §4). */
export const ManifestEntrySchema = z
  .object({
    path: z.string().min(1).max(4096),
    size: z.number().int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();
