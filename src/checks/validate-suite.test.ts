import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadSuite } from "../suite/load-suite.js";
import { modelFrontmatter, renderModel, type SuiteModel, suiteModelArb } from "../test-support/arbitrary-suite.js";
import { suiteFromFiles } from "../test-support/memory-suite.js";
import { BASE_FILES, baseSuite, type Frontmatter, plannerText } from "../test-support/prompt-builder.js";
import { EXAMPLE_SUITE } from "../test-support/temp-suite.js";
import { judgeRequestedExecutor, resolveExactTwin } from "../twin/resolve-exact-twin.js";
import { validateSuite } from "./validate-suite.js";

describe("validateSuite", () => {
  it("validates the example suite clean with 6 genuine pairs, as declared", () => {
    const report = validateSuite(loadSuite(EXAMPLE_SUITE));
    expect(report.diagnostics).toEqual([]);
    expect(report.genuinePairs).toBe(6);
    expect(report.declaredPairs).toBe(6);
    expect(report.pairs.map((p) => `${p.planner}->${p.executor}`)).toEqual([
      "MD-27->MD-28",
      "MD-29->MD-30",
      "MD-31->MD-32",
      "MD-33->MD-34",
      "MD-35->MD-36",
      "MD-37->MD-38",
    ]);
    expect(report.roles).toMatchObject({ investigative: 6, executive: 7, operational: 1, gate: 1, control: 1 });
    expect(report.refusalJudgements).toBeGreaterThanOrEqual(30); // a handful per pair, not pairs × executives
  });

  it("counts prompts without a role under `none`", () => {
    const files = { ...baseSuite(), "x/md-40.md": "---\nprompt_id: MD-40\n---\n<runtime_markers></runtime_markers>\n" };
    expect(validateSuite(suiteFromFiles(files)).roles.none).toBe(1);
  });

  it("returns its diagnostics sorted and counts errors and warnings apart", () => {
    const files = {
      ...baseSuite(),
      [BASE_FILES["MD-10"]]: plannerText("MD-10", "MD-11", { frontmatter: { exact_twin_only: false, review_cycle: undefined } }),
    };
    const report = validateSuite(suiteFromFiles(files, { declared_pairs: 2 }));
    expect(report.errors).toBe(report.diagnostics.filter((d) => d.severity === "error").length);
    expect(report.errors).toBeGreaterThan(0);
    // twinlock.yaml's problems first (they explain the rest), then by file, line and column.
    const keys = report.diagnostics.map((d) => [d.file, d.line, d.col]);
    const rank = (k: (string | number)[]) => (k[0] === "twinlock.yaml" ? 0 : 1);
    expect(keys).toEqual(
      [...keys].sort(
        (a, b) =>
          rank(a) - rank(b) ||
          String(a[0]).localeCompare(String(b[0])) ||
          (a[1] as number) - (b[1] as number) ||
          (a[2] as number) - (b[2] as number),
      ),
    );
  });

  it("leaves body checks out when asked (graph building needs only the pairs)", () => {
    const files = { ...baseSuite(), [BASE_FILES["MD-10"]]: plannerText("MD-10", "MD-11", { body: { omit: ["tool_policy"] } }) };
    expect(validateSuite(suiteFromFiles(files), { bodies: false }).diagnostics).toEqual([]);
    expect(validateSuite(suiteFromFiles(files)).diagnostics.map((d) => d.code)).toEqual(["BODY_BLOCK_MISSING"]);
  });
});

const expectedPairs = (model: SuiteModel) => model.pairs.map((p) => `${p.planner}->${p.executor}`).sort();

describe("validateSuite properties", () => {
  it("validates any generated valid suite clean, with exactly its N genuine pairs", () => {
    fc.assert(
      fc.property(suiteModelArb(), (model) => {
        const report = validateSuite(suiteFromFiles(renderModel(model)), { expectPairs: model.pairs.length });
        expect(report.diagnostics).toEqual([]);
        expect(report.genuinePairs).toBe(model.pairs.length);
        expect(report.pairs.map((p) => `${p.planner}->${p.executor}`).sort()).toEqual(expectedPairs(model));
      }),
      { numRuns: 50 },
    );
  });

  it("has the runtime accept each planner's twin, and only it, among all executives of a generated suite", () => {
    fc.assert(
      fc.property(suiteModelArb(), (model) => {
        const suite = suiteFromFiles(renderModel(model));
        const executives = suite.prompts.filter((p) => p.role === "executive").map((p) => p.id);
        for (const { planner, executor } of model.pairs) {
          const resolved = resolveExactTwin(suite, planner);
          if (!resolved.ok) throw new Error(resolved.reasons.join("; "));
          expect(executives.filter((id) => judgeRequestedExecutor(resolved.twin, id).ok)).toEqual([executor]);
          expect(judgeRequestedExecutor(resolved.twin, executor.toLowerCase()).ok).toBe(false);
        }
      }),
      { numRuns: 50 },
    );
  });

  type Mutation = { kind: "drop"; key: string } | { kind: "set"; key: string; value: unknown } | { kind: "drop-planner-from-requires" };

  const PLANNER_KEYS = [
    "prompt_role",
    "pairing_required",
    "paired_prompt_id",
    "plan_review_required",
    "execution_consent_required",
    "exact_twin_only",
    "review_cycle",
  ];
  const EXECUTOR_KEYS = [
    "prompt_role",
    "pairing_required",
    "paired_prompt_id",
    "accepted_planning_prompt_id",
    "reviewed_handoff_required",
    "execution_consent_required",
    "exact_twin_only",
  ];

  /** A value for `key` that differs from the canonical one. */
  const wrongValue = (key: string, current: unknown, otherIds: string[]): fc.Arbitrary<unknown> => {
    if (key === "prompt_role")
      return fc.constantFrom("investigative", "executive", "operational", "gate", "control").filter((r) => r !== current);
    if (key === "paired_prompt_id" || key === "accepted_planning_prompt_id")
      return fc.oneof(fc.constantFrom(...otherIds), fc.constant("ZZZZ-99999"), fc.constant(String(current).toLowerCase()));
    if (key === "review_cycle") return fc.constantFrom("review_then_consent", "REVIEW_REVISE_REFREEZE_REREVIEW_THEN_CONSENT", "");
    return fc.constantFrom(false, "true", "yes", 1, null);
  };

  const mutatedSuiteArb = suiteModelArb().chain((model) => {
    const ids = [...model.requires.keys()];
    return fc
      .record({ pair: fc.nat(model.pairs.length - 1), member: fc.constantFrom("planner" as const, "executor" as const) })
      .chain(({ pair, member }) => {
        const p = model.pairs[pair] as { planner: string; executor: string };
        const target = member === "planner" ? p.planner : p.executor;
        const current = modelFrontmatter(model).get(target) as Frontmatter;
        const keys = member === "planner" ? PLANNER_KEYS : EXECUTOR_KEYS;
        const twin = member === "planner" ? p.executor : p.planner;
        const otherIds = ids.filter((id) => id !== twin);
        const mutation: fc.Arbitrary<Mutation> = fc.oneof(
          fc.constantFrom(...keys).map((key): Mutation => ({ kind: "drop", key })),
          fc
            .constantFrom(...keys)
            .chain((key) => wrongValue(key, current[key], otherIds).map((value): Mutation => ({ kind: "set", key, value }))),
          ...(member === "executor" ? [fc.constant<Mutation>({ kind: "drop-planner-from-requires" })] : []),
        );
        return mutation.map((m) => ({ model, pair: p, target, mutation: m }));
      });
  });

  it("catches any single mutation of one canonical field of one pair: errors, and fewer than N genuine pairs", () => {
    fc.assert(
      fc.property(mutatedSuiteArb, ({ model, pair, target, mutation }) => {
        const frontmatter = modelFrontmatter(model);
        const fm = { ...(frontmatter.get(target) as Frontmatter) };
        if (mutation.kind === "drop") delete fm[mutation.key];
        else if (mutation.kind === "set") fm[mutation.key] = mutation.value;
        else fm.requires = (fm.requires as string[]).filter((id) => id !== pair.planner);
        frontmatter.set(target, fm);
        const report = validateSuite(suiteFromFiles(renderModel(model, frontmatter)));
        expect(report.errors).toBeGreaterThan(0);
        expect(report.genuinePairs).toBeLessThan(model.pairs.length);
        expect(report.pairs.map((x) => x.planner)).not.toContain(pair.planner);
        expect(
          report.diagnostics.some((d) => d.severity === "error" && (d.promptId === pair.planner || d.promptId === pair.executor)),
        ).toBe(true);
      }),
      { numRuns: 50 },
    );
  });
});
