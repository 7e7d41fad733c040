import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ActionPlanSchema } from "../handoff/handoff-records.js";
import { RunFileSchema } from "../run/run-schema.js";
import { removeGateRuns } from "../test-support/run-fixture.js";
import { safeParseFewIssues, safeParseFirstIssue } from "./first-issue.js";
import { LAZY_SCHEMAS } from "./lazy-schema.js";

afterAll(removeGateRuns);

interface ZodLike {
  safeParse(input: unknown): { success: boolean; data?: unknown; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } };
}

/** One change near a sample: the value at the path `at` replaced, dropped or set to undefined, or a key added to it. */
interface Change {
  at: Array<string | number>;
  how: "replace" | "drop" | "add" | "undefined";
  value: unknown;
}

/**
 * A copy of `sample` with `changes` made in turn. Every value put in is a copy of its own, as JSON.parse, where the
 * parsed inputs come from, makes them: no two places share an object, so no change reaches another place, and no
 * value is ever cyclic. (Putting fast-check's one `{}` in as it was let a later change add it to itself, a cyclic
 * value no JSON text can give, and left it changed for the runs after: fast-check seed 356685377.)
 */
function withChanges(sample: unknown, changes: readonly Change[]): unknown {
  const copy = structuredClone(sample);
  for (const c of changes) {
    let parent: Record<string | number, unknown> | undefined;
    let key: string | number | undefined;
    let node: unknown = copy;
    for (const step of c.at) {
      if (node === null || typeof node !== "object") break;
      parent = node as Record<string | number, unknown>;
      key = step;
      node = parent[step];
    }
    if (c.how === "add" && node !== null && typeof node === "object" && !Array.isArray(node))
      (node as Record<string, unknown>).extra = structuredClone(c.value);
    else if (parent && key !== undefined) {
      if (c.how === "drop") delete parent[key];
      else parent[key] = c.how === "undefined" ? undefined : structuredClone(c.value);
    }
  }
  return copy;
}

/** Random values near `sample`: a few leaves replaced, dropped or set to undefined, keys added. */
function near(sample: unknown): fc.Arbitrary<unknown> {
  const paths: Array<Array<string | number>> = [];
  const walk = (v: unknown, at: Array<string | number>) => {
    paths.push(at);
    if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, [...at, i]);
    else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
  };
  walk(sample, []);
  const leaf = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -3, max: 300 }),
    fc.string({ maxLength: 4 }),
    fc.constant({}),
    fc.constant([{}]),
  );
  const change = fc.record({ at: fc.constantFrom(...paths), how: fc.constantFrom("replace", "drop", "add", "undefined"), value: leaf });
  return fc.array(change, { minLength: 1, maxLength: 3 }).map((changes) => withChanges(sample, changes as Change[]));
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
