import { fileURLToPath } from "node:url";

/**
 * The folder of twinlock's package.json (where `examples/` and `schemas/`
 * are), found from this module's own place: `src/` when run from source,
 * `dist/` when built, and `dist/twinlock.cjs` in the one-file build — each
 * directly below the root.
 */
export const PACKAGE_ROOT = fileURLToPath(new URL("../", import.meta.url));
