// Regenerate schemas/*.json from the zod schemas (npm run schemas).
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PUBLISHED_SCHEMAS, renderSchema } from "../src/schemas/published-schemas.js";

const dir = path.resolve(import.meta.dirname, "../schemas");
mkdirSync(dir, { recursive: true });
for (const [name, schema] of Object.entries(PUBLISHED_SCHEMAS)) {
  writeFileSync(path.join(dir, name), renderSchema(name, schema));
  console.log(`wrote schemas/${name}`);
}
