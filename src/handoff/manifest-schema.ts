import "../schemas/zod-setup.js";
import { z } from "zod/mini";
import { lazySchema } from "../schemas/lazy-schema.js";

/** One manifest line: POSIX relative path, byte size, sha256 hex (SPEC §4). */
export const ManifestEntrySchema = lazySchema("manifest-schema.ManifestEntrySchema", () =>
  z.strictObject({
    path: z.string().check(z.minLength(1), z.maxLength(4096)),
    size: z.number().check(z.int(), z.gte(0)),
    sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  }),
);
