import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, REPO_ROOT } from "../support/ensure-built.js";

/**
 * What the one-file CLI bundle holds. scripts/bundle-cli.mjs loads zod/mini on
 * first use (zodOnDemand); a plain `require("zod/mini")` there would resolve to
 * zod's CommonJS build and bundle a second zod beside the ES one, which the
 * setup (English messages, no code generation) never configures.
 */
let bundle: string;

beforeAll(async () => {
  await ensureBuilt();
  bundle = readFileSync(path.join(REPO_ROOT, "dist", "twinlock.cjs"), "utf8");
}, 240_000);

describe("the CLI bundle", () => {
  it("holds zod's ES modules once, and not its CommonJS build", () => {
    // Each copy of zod's core makes this constructor once; the CommonJS build assigns it to its exports.
    expect(bundle.split('("$ZodDiscriminatedUnion",').length - 1).toBe(1);
    expect(bundle).not.toContain(".$ZodDiscriminatedUnion=");
  });

  it("holds no classic zod (its server and MCP schemas load from node_modules)", () => {
    expect(bundle).not.toContain('"ZodDiscriminatedUnion"');
  });
});
