import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { valuesNear } from "../test-support/near-values.js";
import { removeGateRuns } from "../test-support/run-fixture.js";
import { FAST_VALIDATORS, NO, NOT_SURE } from "./fast-validators.generated.js";
import { FAST_VALIDATORS_FILE, renderFastValidators } from "./fast-validators-file.js";
import { compareWithZod, LAZY_SCHEMAS } from "./lazy-schema.js";

const src = path.resolve(import.meta.dirname, "..");

/** Every .ts file under src that makes lazily built schemas. */
function modulesMakingLazySchemas(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") && !file.includes(`${path.sep}schemas${path.sep}`)) {
        if (/\blazySchema(sOf)?\(/.test(readFileSync(file, "utf8"))) out.push(path.relative(src, file));
      }
    }
  };
  walk(src);
  return out.sort();
}

interface ZodLike {
  safeParse(input: unknown): { success: boolean; data?: unknown };
}

/** Random JSON-like values near `sample`: leaves changed to other types and values, keys dropped or added. */
function mutationsOf(sample: unknown): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -3, max: 300 }),
    fc.double({ noNaN: false }),
    fc.string({ maxLength: 5 }),
    fc.constantFrom(
      "",
      "x",
      "all",
      "MD-29",
      `sha256:${"0".repeat(64)}`,
      "2026-11-30T10:00:00.000Z",
      "approved",
      "\ud83d\ude00",
      "__proto__",
    ),
  );
  return valuesNear(sample, leaf, ["extra", "kind", "__proto__", "constructor"]);
}

describe("the generated fast validators", () => {
  afterAll(removeGateRuns);

  it("are what the generator makes from today's schemas (run npm run schemas after changing one)", async () => {
    expect(readFileSync(FAST_VALIDATORS_FILE, "utf8")).toBe(await renderFastValidators());
  });

  it("cover every module that makes lazily built schemas (src/schemas/lazy-schema-modules.ts lists them all)", () => {
    const listed = [...readFileSync(path.join(src, "schemas", "lazy-schema-modules.ts"), "utf8").matchAll(/^import "\.\.\/(.+)\.js";$/gm)]
      .map((m) => `${m[1]}.ts`)
      .sort();
    expect(listed).toEqual(modulesMakingLazySchemas());
  });

  it("have a function for every lazily built schema, and nothing else", async () => {
    await renderFastValidators();
    expect(Object.keys(FAST_VALIDATORS).sort()).toEqual([...LAZY_SCHEMAS.keys()].sort());
  });

  it("accept only what zod accepts, with zod's very output (key order included), on inputs near real records", async () => {
    await renderFastValidators();
    const { demoRunFile } = await import("../test-support/demo-run-file.js");
    const samples = await demoRunFile();
    let compared = 0;
    for (const { name, value } of samples) {
      const fast = FAST_VALIDATORS[name] as (v: unknown) => unknown;
      // zod's own schema, not the module's proxy (whose parse would ask the fast validator first).
      const zod = (LAZY_SCHEMAS.get(name) as { zod: () => object }).zod();
      // The real record itself: both accept it, alike.
      const out = fast(value);
      expect(out, `${name} on the real record`).not.toBe(NO);
      if (out !== NOT_SURE) compareWithZod(name, zod, value, out);
      fc.assert(
        fc.property(mutationsOf(value), (input) => {
          const result = fast(input);
          if (result === NO)
            expect((zod as ZodLike).safeParse(input).success, `${name}: the fast validator refused what zod accepts`).toBe(false);
          // Accepted: zod accepts too, with the very same output (compareWithZod throws otherwise).
          else if (result !== NOT_SURE) compareWithZod(name, zod, input, result);
          compared++;
        }),
        { numRuns: Number(process.env.FUZZ_RUNS ?? 200) },
      );
    }
    expect(compared).toBeGreaterThan(1000);
  });
});
