import { describe, expect, it } from "vitest";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { suiteFromFiles } from "../test-support/memory-suite.js";
import {
  BASE_FILES,
  baseSuite,
  executorText,
  type Frontmatter,
  lineOf,
  plannerText,
  unpairedText,
} from "../test-support/prompt-builder.js";
import { checkPairs } from "./check-pairs.js";

const PLANNER = BASE_FILES["MD-10"];
const EXECUTOR = BASE_FILES["MD-11"];

function check(files: Record<string, string>) {
  const { diagnostics, pairs } = checkPairs(suiteFromFiles(files));
  return { diagnostics, pairs: pairs.map((t) => `${t.planner.id}->${t.executor.id}`) };
}

const about = (diagnostics: Diagnostic[], promptId: string) => diagnostics.filter((d) => d.promptId === promptId);

describe("checkPairs on a valid suite", () => {
  it("reports nothing and counts MD-10→MD-11 and MD-12→MD-13 as the genuine pairs", () => {
    expect(check(baseSuite())).toEqual({ diagnostics: [], pairs: ["MD-10->MD-11", "MD-12->MD-13"] });
  });

  it("does not count an unpaired executive (MD-20) as anyone's twin", () => {
    expect(check(baseSuite()).pairs.some((p) => p.includes("MD-20"))).toBe(false);
  });
});

// SPEC §2's canonical metadata, written out here rather than imported, so a
// key dropped from the source's table would be caught.
const PLANNER_CANONICAL_KEYS = [
  "pairing_required",
  "plan_review_required",
  "execution_consent_required",
  "exact_twin_only",
  "review_cycle",
];
const EXECUTOR_CANONICAL_KEYS = [
  "pairing_required",
  "accepted_planning_prompt_id",
  "reviewed_handoff_required",
  "execution_consent_required",
  "exact_twin_only",
];
const WRONG: Record<string, unknown> = {
  pairing_required: false,
  plan_review_required: false,
  execution_consent_required: "true",
  exact_twin_only: false,
  review_cycle: "review_then_consent",
  reviewed_handoff_required: "yes",
  accepted_planning_prompt_id: "MD-12",
};

describe.each([
  {
    who: "planner",
    id: "MD-10",
    file: PLANNER,
    keys: PLANNER_CANONICAL_KEYS,
    build: (fm: Frontmatter) => plannerText("MD-10", "MD-11", { frontmatter: fm }),
  },
  {
    who: "executor",
    id: "MD-11",
    file: EXECUTOR,
    keys: EXECUTOR_CANONICAL_KEYS,
    build: (fm: Frontmatter) => executorText("MD-11", "MD-10", { frontmatter: fm }),
  },
])("canonical metadata of the paired $who", ({ id, file, keys, build }) => {
  it.each(keys)(`reports a wrong %s at its line, naming ${id}, and breaks the pair`, (key) => {
    const text = build({ [key]: WRONG[key] });
    const { diagnostics, pairs } = check({ ...baseSuite(), [file]: text });
    const hit = about(diagnostics, id).find((d) => d.field === key && d.code === "PAIR_METADATA");
    expect(hit, JSON.stringify(diagnostics)).toMatchObject({ file, line: lineOf(text, `${key}:`), col: 1, severity: "error" });
    expect(hit?.message).toContain(key);
    expect(pairs).toEqual(["MD-12->MD-13"]);
  });

  it.each(keys)(`reports a missing %s at the file start, naming ${id} and the key, and breaks the pair`, (key) => {
    const text = build({ [key]: undefined });
    const { diagnostics, pairs } = check({ ...baseSuite(), [file]: text });
    const hit = about(diagnostics, id).find((d) => d.field === key && d.code === "PAIR_METADATA");
    expect(hit, JSON.stringify(diagnostics)).toMatchObject({ file, line: 1, col: 1 });
    expect(hit?.message).toContain("found nothing");
    expect(pairs).toEqual(["MD-12->MD-13"]);
  });

  it(`reports a missing prompt_role of ${id} as PAIR_ROLE`, () => {
    const { diagnostics, pairs } = check({ ...baseSuite(), [file]: build({ prompt_role: undefined }) });
    expect(about(diagnostics, id)).toContainEqual(expect.objectContaining({ code: "PAIR_ROLE", file, line: 1, field: "prompt_role" }));
    expect(pairs).toEqual(["MD-12->MD-13"]);
  });

  it(`reports a missing paired_prompt_id of ${id} as pairing_required without a twin, at pairing_required`, () => {
    const text = build({ paired_prompt_id: undefined });
    const { diagnostics, pairs } = check({ ...baseSuite(), [file]: text });
    expect(about(diagnostics, id)).toContainEqual(
      expect.objectContaining({ code: "PAIR_REQUIRED_WITHOUT_TWIN", file, line: lineOf(text, "pairing_required:") }),
    );
    expect(pairs).toEqual(["MD-12->MD-13"]);
  });

  it(`reports a boolean written as the string "true" on ${id}`, () => {
    const text = build({ exact_twin_only: "true" });
    const { diagnostics } = check({ ...baseSuite(), [file]: text });
    expect(about(diagnostics, id)).toContainEqual(
      expect.objectContaining({ code: "PAIR_METADATA", field: "exact_twin_only", line: lineOf(text, "exact_twin_only:") }),
    );
  });
});

describe("pair structure", () => {
  it("reports a planner naming a missing twin at its paired_prompt_id line", () => {
    const text = plannerText("MD-10", "MD-99");
    const { diagnostics, pairs } = check({ ...baseSuite(), [PLANNER]: text });
    expect(about(diagnostics, "MD-10")).toContainEqual(
      expect.objectContaining({
        code: "PAIR_TARGET_MISSING",
        file: PLANNER,
        line: lineOf(text, "paired_prompt_id:"),
        field: "paired_prompt_id",
      }),
    );
    expect(pairs).toEqual(["MD-12->MD-13"]);
  });

  it("reports a non-reciprocal twin on the prompt whose twin does not name it back", () => {
    const text = plannerText("MD-14", "MD-11");
    const { diagnostics, pairs } = check({ ...baseSuite(), "pairs/md-14.md": text });
    const hit = about(diagnostics, "MD-14").find((d) => d.code === "PAIR_NOT_RECIPROCAL");
    expect(hit).toMatchObject({ file: "pairs/md-14.md", line: lineOf(text, "paired_prompt_id:") });
    expect(hit?.message).toContain("MD-10");
    expect(pairs).toEqual(["MD-10->MD-11", "MD-12->MD-13"]);
  });

  it("reports an executor that names another planner, on both sides", () => {
    const { diagnostics, pairs } = check({ ...baseSuite(), [EXECUTOR]: executorText("MD-11", "MD-12") });
    expect(about(diagnostics, "MD-10").map((d) => d.code)).toContain("PAIR_NOT_RECIPROCAL");
    expect(about(diagnostics, "MD-11").map((d) => d.code)).toContain("PAIR_NOT_RECIPROCAL");
    expect(pairs).toEqual(["MD-12->MD-13"]);
  });

  it("reports a prompt naming itself as its twin", () => {
    const text = plannerText("MD-10", "MD-10");
    const { diagnostics } = check({ ...baseSuite(), [PLANNER]: text });
    expect(about(diagnostics, "MD-10")).toContainEqual(
      expect.objectContaining({ code: "PAIR_NOT_RECIPROCAL", line: lineOf(text, "paired_prompt_id:") }),
    );
  });

  it("reports a planner with a role other than investigative or executive at its prompt_role line", () => {
    const text = plannerText("MD-10", "MD-11", { frontmatter: { prompt_role: "operational" } });
    const { diagnostics, pairs } = check({ ...baseSuite(), [PLANNER]: text });
    expect(about(diagnostics, "MD-10")).toContainEqual(
      expect.objectContaining({ code: "PAIR_ROLE", file: PLANNER, line: lineOf(text, "prompt_role:"), field: "prompt_role" }),
    );
    expect(pairs).toEqual(["MD-12->MD-13"]);
  });

  it("reports two executives paired with each other, naming prompt_role, in the planner's file", () => {
    const { diagnostics, pairs } = check({
      ...baseSuite(),
      [PLANNER]: plannerText("MD-10", "MD-11", { frontmatter: { prompt_role: "executive" } }),
    });
    const mine = about(diagnostics, "MD-10");
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((d) => d.file === PLANNER)).toBe(true);
    expect(diagnostics.some((d) => d.code === "PAIR_ROLE" && d.message.includes("prompt_role"))).toBe(true);
    expect(pairs).toEqual(["MD-12->MD-13"]);
  });

  it("reports an executor whose twin is an unpaired executive with the wrong role", () => {
    const { diagnostics } = check({ ...baseSuite(), [EXECUTOR]: executorText("MD-11", "MD-20") });
    expect(about(diagnostics, "MD-11")).toContainEqual(expect.objectContaining({ code: "PAIR_ROLE", field: "paired_prompt_id" }));
  });

  it("reports an executor that does not require its planner at its requires line", () => {
    const text = executorText("MD-11", "MD-10", { frontmatter: { requires: ["MD-01"] } });
    const { diagnostics, pairs } = check({ ...baseSuite(), [EXECUTOR]: text });
    expect(about(diagnostics, "MD-11")).toContainEqual(
      expect.objectContaining({ code: "PAIR_EXECUTOR_REQUIRES", file: EXECUTOR, line: lineOf(text, "requires:"), field: "requires" }),
    );
    expect(pairs).toEqual(["MD-12->MD-13"]);
  });

  it("reports an executor with no requires at all", () => {
    const { diagnostics } = check({ ...baseSuite(), [EXECUTOR]: executorText("MD-11", "MD-10", { frontmatter: { requires: undefined } }) });
    expect(about(diagnostics, "MD-11").map((d) => d.code)).toContain("PAIR_EXECUTOR_REQUIRES");
  });

  it("reports pairing_required: true without a twin on an unpaired prompt", () => {
    const text = unpairedText("MD-20", "executive", { frontmatter: { pairing_required: true } });
    const { diagnostics } = check({ ...baseSuite(), [BASE_FILES["MD-20"]]: text });
    expect(about(diagnostics, "MD-20")).toEqual([
      expect.objectContaining({ code: "PAIR_REQUIRED_WITHOUT_TWIN", line: lineOf(text, "pairing_required:"), field: "pairing_required" }),
    ]);
  });

  it("reports a twin named while pairing_required is false", () => {
    const text = unpairedText("MD-20", "executive", { frontmatter: { paired_prompt_id: "MD-10" } });
    const { diagnostics } = check({ ...baseSuite(), [BASE_FILES["MD-20"]]: text });
    expect(about(diagnostics, "MD-20").map((d) => d.code)).toContain("PAIR_TWIN_WITHOUT_REQUIRED");
  });

  it("does not count a pair whose planner ID is declared twice", () => {
    const { diagnostics, pairs } = check({ ...baseSuite(), "zz/md-10.md": plannerText("MD-10", "MD-11") });
    expect(pairs).toEqual(["MD-12->MD-13"]);
    expect(diagnostics.filter((d) => d.code === "PAIR_NOT_RECIPROCAL")).toEqual([]);
  });
});

describe("override keys on pair members", () => {
  it.each([
    ["execution_twin", "MD-20"],
    ["fallback_executor", "MD-20"],
    ["preferred_executor", "MD-20"],
    ["backup_runner_prompt", "MD-20"],
  ])("reports %s: %s on the planner at that key's line and breaks the pair", (key, value) => {
    const text = plannerText("MD-10", "MD-11", { frontmatter: { [key]: value } });
    const { diagnostics, pairs } = check({ ...baseSuite(), [PLANNER]: text });
    const hit = about(diagnostics, "MD-10").find((d) => d.code === "OVERRIDE_KEY");
    expect(hit).toMatchObject({ file: PLANNER, line: lineOf(text, `${key}:`), field: key });
    expect(hit?.message).toContain(key);
    expect(hit?.message).toContain(value);
    expect(pairs).toEqual(["MD-12->MD-13"]);
  });

  it("reports a nested `routing: {executor: MD-20}` on the executor at the routing line", () => {
    const text = executorText("MD-11", "MD-10", { frontmatter: { routing: { executor: "MD-20" } } });
    const { diagnostics, pairs } = check({ ...baseSuite(), [EXECUTOR]: text });
    expect(about(diagnostics, "MD-11")).toContainEqual(
      expect.objectContaining({ code: "OVERRIDE_KEY", line: lineOf(text, "routing:"), field: "routing" }),
    );
    expect(pairs).toEqual(["MD-12->MD-13"]);
  });

  it("reports an override key on an unpaired prompt too", () => {
    const text = unpairedText("MD-20", "executive", { frontmatter: { preferred_executor: "MD-11" } });
    const { diagnostics } = check({ ...baseSuite(), [BASE_FILES["MD-20"]]: text });
    expect(about(diagnostics, "MD-20").map((d) => d.code)).toEqual(["OVERRIDE_KEY"]);
  });

  it("keeps `owner_team: platform` and other unknown harmless keys without a problem", () => {
    const text = plannerText("MD-10", "MD-11", {
      frontmatter: { owner_team: "platform", ticket: "OPS-1234", reviewers: ["alice", "bob"] },
    });
    expect(check({ ...baseSuite(), [PLANNER]: text })).toEqual({ diagnostics: [], pairs: ["MD-10->MD-11", "MD-12->MD-13"] });
  });
});
