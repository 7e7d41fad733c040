import { describe, expect, it } from "vitest";
import { findOverrideKeys } from "./find-override-keys.js";

const paths = (frontmatter: Record<string, unknown>) => findOverrideKeys(frontmatter).map((o) => o.path);

describe("findOverrideKeys (no second source of truth for the twin)", () => {
  it.each([
    "execution_twin",
    "twin_prompt_id",
    "executor_prompt_id",
    "alternate_executor",
    "alternate_executors",
    "fallback_executor",
    "executor_override",
    "routing_override",
    "preferred_executor",
  ])("flags the spec's key %s carrying a prompt ID", (key) => {
    expect(findOverrideKeys({ [key]: "MD-28" })).toEqual([{ path: key, topKey: key, carriedId: "MD-28" }]);
  });

  it.each(["execution_twin", "fallback_executor", "alternate_executors", "routing_override"])(
    "flags the spec's key %s even when it holds no ID yet (null, empty list)",
    (key) => {
      expect(paths({ [key]: null })).toEqual([key]);
      expect(paths({ [key]: [] })).toEqual([key]);
    },
  );

  it.each([
    ["backup_runner_prompt", "MD-28"],
    ["delegate_to", "MD-28"],
    ["dispatch_target", "MD-28"],
    ["successor_prompt", "MD-28"],
    ["next_prompt_id", "MD-28"],
    ["route", "use MD-28 when MD-30 is busy"],
    ["twin", "MD-28"],
    ["executor", ["MD-28", "MD-30"]],
  ])("flags the new name %s (not in the spec's list) because it is about routing and carries an ID", (key, value) => {
    expect(paths({ [key]: value })).toEqual([key]);
  });

  it("flags a nested routing mapping and reports it under its top-level key", () => {
    expect(findOverrideKeys({ routing: { executor: "MD-28" } })).toEqual([{ path: "routing", topKey: "routing", carriedId: "MD-28" }]);
  });

  it("flags a suspect key nested under an innocent one, with its dotted path", () => {
    expect(findOverrideKeys({ runtime: { hints: { fallback_executor: "MD-28" } } })).toEqual([
      { path: "runtime.hints.fallback_executor", topKey: "runtime", carriedId: "MD-28" },
    ]);
  });

  it("flags spellings in other cases and separators", () => {
    expect(paths({ Execution_Twin: "MD-28" })).toEqual(["Execution_Twin"]);
    expect(paths({ "fallback-executor": "MD-28" })).toEqual(["fallback-executor"]);
    expect(paths({ fallbackExecutor: "MD-28" })).toEqual(["fallbackExecutor"]);
  });

  it("does not flag harmless keys, even ones that carry prompt IDs", () => {
    expect(
      findOverrideKeys({
        owner_team: "platform",
        related_prompts: ["MD-28"],
        requires: ["MD-01", "MD-28"],
        contract_refs: ["exact-twin-rule", "runtime-markers"],
        description: "Plans work for MD-30 and never for MD-28.",
        category: "debugging",
        tags: ["MD-28 migration notes"],
      }),
    ).toEqual([]);
  });

  it("does not flag suspect names whose value carries no prompt ID", () => {
    expect(findOverrideKeys({ routing_notes: "ask on #platform", executor_count: 1, twin_policy: "strict" })).toEqual([]);
  });

  it("does not flag the sanctioned keys, which are the single source of truth", () => {
    expect(
      findOverrideKeys({
        paired_prompt_id: "MD-30",
        accepted_planning_prompt_id: "MD-29",
        exact_twin_only: true,
        pairing_required: true,
        execution_consent_required: true,
        reviewed_handoff_required: true,
        plan_review_required: true,
      }),
    ).toEqual([]);
  });

  it("flags a sanctioned key name when it re-appears nested under an override mapping", () => {
    expect(paths({ overrides: { paired_prompt_id: "MD-28" } })).toEqual(["overrides"]);
  });

  it("flags a sanctioned key name nested under an empty top-level key, which is not the top level", () => {
    expect(findOverrideKeys({ "": { paired_prompt_id: "MD-28" } })).toEqual([
      { path: ".paired_prompt_id", topKey: "", carriedId: "MD-28" },
    ]);
  });

  it("names a key found inside a list of mappings by its item's index", () => {
    expect(paths({ runtime: { hints: [{ note: "none" }, { fallback_executor: "MD-28" }] } })).toEqual([
      "runtime.hints[1].fallback_executor",
    ]);
  });

  // Key names about executors and pairing must be caught too, not only the
  // spec's list.
  it.each([["executed_by"], ["execution_prompt"], ["paired_with"], ["pair_prompt_id"], ["counterpart_prompt_id"]])(
    "flags %s: MD-28, a key about the executor or the pair that carries a prompt ID",
    (key) => {
      expect(paths({ [key]: "MD-28" })).toEqual([key]);
    },
  );
});
