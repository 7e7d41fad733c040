// Regenerate schemas/*.json and src/schemas/fast-validators.generated.ts from the zod schemas (npm run schemas).
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { FAST_VALIDATORS_FILE, renderFastValidators } from "../src/schemas/fast-validators-file.js";
import { PUBLISHED_SCHEMAS, renderSchema } from "../src/schemas/published-schemas.js";

const dir = path.resolve(import.meta.dirname, "../schemas");
mkdirSync(dir, { recursive: true });
for (const [name, schema] of Object.entries(PUBLISHED_SCHEMAS)) {
  writeFileSync(path.join(dir, name), renderSchema(name, schema));
  console.log(`wrote schemas/${name}`);
}
writeFileSync(FAST_VALIDATORS_FILE, await renderFastValidators());
console.log(`wrote ${path.relative(path.resolve(import.meta.dirname, ".."), FAST_VALIDATORS_FILE)}`);
