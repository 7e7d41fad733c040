import path from "node:path";
import { generateFastValidators } from "./generate-fast-validators.js";
import { LAZY_SCHEMAS } from "./lazy-schema.js";

/** The generated module's path in the source tree. */
export const FAST_VALIDATORS_FILE = path.resolve(import.meta.dirname, "fast-validators.generated.ts");

/** The text fast-validators.generated.ts must hold: generated from every lazily built schema. */
export async function renderFastValidators(): Promise<string> {
  await import("./lazy-schema-modules.js");
  return generateFastValidators(LAZY_SCHEMAS);
}
