import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ActionPlanSchema } from "../handoff/handoff-records.js";
import { RunFileSchema } from "../run/run-schema.js";
import { valuesNear, withChanges } from "../test-support/near-values.js";
import { removeGateRuns } from "../test-support/run-fixture.js";
import { safeParseFewIssues, safeParseFirstIssue } from "./first-issue.js";
import { LAZY_SCHEMAS } from "./lazy-schema.js";

afterAll(removeGateRuns);

interface ZodLike {
  safeParse(input: unknown): { success: boolean; data?: unknown; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } };
}

/** Random values near `sample`: a few leaves replaced, dropped or set to undefined, keys added. */
function near(sample: unknown): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -3, max: 300 }),
    fc.string({ maxLength: 4 }),
    fc.constant({}),
    fc.constant([{}]),
  );
  return valuesNear(sample, leaf);
}

const startsWith = (path: PropertyKey[], prefix: PropertyKey[]) => prefix.every((k, i) => path[i] === k);

describe("the values near a record the property below compares on", () => {
  it("are never cyclic: a key added to an object put in at the same place gets a copy, and fast-check's own value is left as it was", () => {
    // The changes of fast-check seed 356685377, where `{}` was one object in both changes and became its own `extra`.
    const leaf = {};
    const changed = withChanges({ path: "report.md", size: 1 }, [
      { at: ["size"], how: "replace", value: leaf },
      { at: ["path"], how: "replace", value: "" },
      { at: ["size"], how: "add", value: leaf },
    ]);
    expect(JSON.parse(JSON.stringify(changed))).toEqual({ path: "", size: { extra: {} } });
    expect(leaf).toEqual({});
  });
});

describe("a parse that stops at the first issues", () => {
  it("accepts exactly what zod accepts, and its issue is where one of zod's issues is (or deeper, inside a union), on inputs near real records", async () => {
    const { demoRunFile } = await import("../test-support/demo-run-file.js");
    const samples = await demoRunFile();
    let compared = 0;
    for (const { name, value } of samples) {
      const entry = LAZY_SCHEMAS.get(name) as { schema: object; zod: () => object };
      const zod = entry.zod() as ZodLike;
      fc.assert(
        fc.property(near(value), (input) => {
          const theirs = zod.safeParse(input);
          const ours = safeParseFewIssues(entry.schema as never, input, 3);
          expect(ours.success, name).toBe(theirs.success);
          if (!ours.success) {
            expect(ours.error.issues.length).toBeLessThanOrEqual(3);
            const issue = ours.error.issues[0] as { path: PropertyKey[] };
            const zodPaths = (theirs.error?.issues ?? []).map((i) => i.path);
            expect(
              zodPaths.some((p) => startsWith(issue.path, p)),
              `${name}: ${JSON.stringify(issue)} vs ${JSON.stringify(theirs.error?.issues)}`,
            ).toBe(true);
          }
          compared++;
        }),
        { numRuns: Number(process.env.FUZZ_RUNS ?? 60) },
      );
    }
    expect(compared).toBeGreaterThan(300);
  });

  it("names the first of 100,000 bad events, where zod overflowed the stack merging their issues", () => {
    const result = safeParseFirstIssue(RunFileSchema, {
      format: "twinlock-run/2",
      revision: 1,
      head: `sha256:${"0".repeat(64)}`,
      state: "not a state",
      events: Array.from({ length: 100_000 }, () => ({})),
    });
    expect(result.success).toBe(false);
    if (!result.success) expect(result.error.issues).toEqual([expect.objectContaining({ path: ["state"] })]);
  });

  it("stops after the few issues asked for among 100,000 empty actions", () => {
    const result = safeParseFewIssues(ActionPlanSchema, { actions: Array.from({ length: 100_000 }, () => ({})), stops: [] }, 5);
    expect(result.success).toBe(false);
    if (!result.success)
      expect(result.error.issues.map((i) => i.path.join("."))).toEqual([
        "actions.0.id",
        "actions.0.summary",
        "actions.0.target",
        "actions.0.findings",
        "actions.0.risk",
      ]);
  });
});
