/**
 * One fixture per diagnostic code: each plants the smallest defect that
 * triggers its code and states where the problem must be reported. The
 * table is typed `Record<DiagnosticCode, …>` and also checked at run time,
 * so a new code without a fixture fails both `tsc` and this file.
 */
import { readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { checkStateMachine } from "../checks/check-state-machine.js";
import { validateSuite } from "../checks/validate-suite.js";
import { TRANSITIONS } from "../run/transition-table.js";
import { loadSuite } from "../suite/load-suite.js";
import { suiteFromFiles } from "../test-support/memory-suite.js";
import {
  BASE_FILES,
  baseSuite,
  colOf,
  executorText,
  gateText,
  lineContaining,
  lineOf,
  plannerText,
  unpairedText,
} from "../test-support/prompt-builder.js";
import { copyExampleSuite, EXAMPLE_SUITE, makeOverlongFile, removeTempDirs, writeSuite } from "../test-support/temp-suite.js";
import { DIAGNOSTIC_CODES, type Diagnostic, type DiagnosticCode, type Severity } from "./diagnostic.js";

// The refusal check can only fire when the runtime's own judgement is wrong,
// and the real judgement is exact. To show the check's contract, the judgement
// is swapped for a lenient one (accept any executive) only while the
// TWIN_REFUSAL fixture runs; every other fixture uses the real function.
const judgement = vi.hoisted(() => ({ lenient: false }));
vi.mock("../twin/resolve-exact-twin.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../twin/resolve-exact-twin.js")>();
  return {
    ...real,
    judgeRequestedExecutor: (twin: Parameters<typeof real.judgeRequestedExecutor>[0], id: string) =>
      judgement.lenient ? { ok: true as const } : real.judgeRequestedExecutor(twin, id),
  };
});

afterEach(() => {
  judgement.lenient = false;
});
afterAll(removeTempDirs);

interface CodeFixture {
  /** The defect planted, in words. */
  plants: string;
  /** Run the checks on the planted suite and return every diagnostic. */
  run: () => Diagnostic[] | Promise<Diagnostic[]>;
  file: string;
  line: number;
  col?: number;
  severity?: Severity;
  promptId?: string;
  field?: string;
}

const validateOnDisk = (files: Record<string, string | Uint8Array>, setup?: (root: string) => void) => {
  const root = writeSuite(files);
  setup?.(root);
  return validateSuite(loadSuite(root)).diagnostics;
};
const validateInMemory = (files: Record<string, string>, options: { expectPairs?: number } = {}) =>
  validateSuite(suiteFromFiles(files, { declared_pairs: 2 }), options).diagnostics;
const bodyLineOf = (text: string) => text.split("\n").indexOf("---", 1) + 2;

// Texts used by more than one fixture field (line and column are computed from the text itself).
const t = {
  notUtf8: Buffer.concat([Buffer.from("---\nprompt_id: MD-40\ntitle: caf"), Buffer.from([0xe9]), Buffer.from("\n---\nbody\n")]),
  nul: Buffer.concat([Buffer.from("---\nprompt_id: MD-40\n---\n\nab"), Buffer.from([0]), Buffer.from("cd\n")]),
  yaml: "---\nprompt_id: MD-40\ntitle: a: b\n---\nbody\n",
  idFormat: "---\ntitle: lower-case id\nprompt_id: md-40\n---\nbody\n",
  fieldType: unpairedText("MD-40", "operational", { frontmatter: { title: ["not", "a", "string"] } }),
  fieldValue: unpairedText("MD-40", "operational", { frontmatter: { default_mode: "FAST_AND_LOOSE" } }),
  misspelt: executorText("MD-11", "MD-10", { frontmatter: { dry_run_requried: true } }),
  targetMissing: plannerText("MD-10", "MD-99"),
  notReciprocal: plannerText("MD-14", "MD-11"),
  role: plannerText("MD-10", "MD-11", { frontmatter: { prompt_role: "operational" } }),
  metadata: plannerText("MD-10", "MD-11", { frontmatter: { exact_twin_only: false } }),
  requiredWithoutTwin: unpairedText("MD-20", "executive", { frontmatter: { pairing_required: true } }),
  twinWithoutRequired: plannerText("MD-10", "MD-11", { frontmatter: { pairing_required: false } }),
  executorRequires: executorText("MD-11", "MD-10", { frontmatter: { requires: ["MD-01"] } }),
  override: plannerText("MD-10", "MD-11", { frontmatter: { fallback_executor: "MD-20" } }),
  refUnknown: unpairedText("MD-20", "executive", { frontmatter: { requires: ["MD-01", "MD-77"] } }),
  refSelf: unpairedText("MD-20", "executive", { frontmatter: { related_prompts: ["MD-20"] } }),
  cycleA: unpairedText("MD-01", "control", { frontmatter: { requires: ["MD-02"] } }),
  cycleB: unpairedText("MD-02", "control", { frontmatter: { requires: ["MD-01"] } }),
  cyclePaired: plannerText("MD-10", "MD-11", { frontmatter: { requires: ["MD-01", "MD-11"] } }),
  blockMissing: plannerText("MD-10", "MD-11", { body: { omit: ["handoff_contract"] } }),
  blockUnclosed: unpairedText("MD-20", "executive").replace("</tool_policy>", ""),
  placeholder: unpairedText("MD-20", "executive").replace("<tool_policy>", "<tool_policy>\nTWINLOCK-FILL-IN: the tools"),
  markerMissing: unpairedText("MD-20", "executive", {
    body: { markers: ["@EVIDENCE:{id}", "?UNKNOWN:{id}", "#FINDING:{id}", "+ACTION:{id}", "!STOP:{reason}"] },
  }),
  phraseMissing: plannerText("MD-10", "MD-11", {
    body: { blocks: { plan_review_and_execution_gate: gateText("MD-11").replace("re-freeze", "freeze again") } },
  }),
  twinNotNamed: plannerText("MD-10", "MD-11", { body: { blocks: { plan_review_and_execution_gate: gateText("the executor") } } }),
  alternate: plannerText("MD-10", "MD-11", {
    body: { blocks: { plan_review_and_execution_gate: `${gateText("MD-11")}\nIf MD-11 is busy, hand the plan to MD-20.` } },
  }),
  copied: executorText("MD-11", "MD-10", { body: { extra: "- Error rate stays under the agreed threshold for one full hour." } }),
  config: "suite_id: fixture\ndeclared_pair: 2\n",
  unsigned: "suite_id: fixture\ndeclared_pairs: 2\npolicies:\n  require_signed_receipts: false\n",
};

const FIXTURES: Record<DiagnosticCode, CodeFixture> = {
  SUITE_SYMLINK_SKIPPED: {
    plants: "a symlink loop `loop -> .` inside the suite folder",
    run: () => validateOnDisk(baseSuite(), (root) => symlinkSync(".", path.join(root, "loop"))),
    file: "loop",
    line: 1,
  },
  FILE_UNREADABLE: {
    plants: "a prompt file that cannot be opened (path longer than PATH_MAX, which stops root too)",
    run: () => {
      let rel = "";
      const diagnostics = validateOnDisk(baseSuite(), (root) => {
        rel = makeOverlongFile(root);
      });
      FIXTURES.FILE_UNREADABLE.file = rel;
      return diagnostics;
    },
    file: "(set by run)",
    line: 1,
  },
  FILE_TOO_LARGE: {
    plants: "a 10 MB *.md file",
    run: () =>
      validateOnDisk(baseSuite(), (root) => {
        writeFileSync(path.join(root, "huge.md"), "");
        truncateSync(path.join(root, "huge.md"), 10 * 1024 * 1024);
      }),
    file: "huge.md",
    line: 1,
  },
  FILE_NOT_UTF8: {
    plants: "a Latin-1 byte 0xE9 in a title",
    run: () => validateOnDisk({ ...baseSuite(), "bad/latin1.md": t.notUtf8 }),
    file: "bad/latin1.md",
    line: 3,
    col: "title: caf".length + 1,
  },
  FILE_NUL_BYTE: {
    plants: "a NUL byte in the body",
    run: () => validateOnDisk({ ...baseSuite(), "bad/nul.md": t.nul }),
    file: "bad/nul.md",
    line: 5,
    col: 3,
  },
  FRONTMATTER_MISSING: {
    plants: "a Markdown file with no frontmatter",
    run: () => validateInMemory({ ...baseSuite(), "bad/plain.md": "# Notes\n\nNo frontmatter here.\n" }),
    file: "bad/plain.md",
    line: 1,
  },
  FRONTMATTER_UNCLOSED: {
    plants: "frontmatter opened by `---` and never closed",
    run: () => validateInMemory({ ...baseSuite(), "bad/open.md": "---\nprompt_id: MD-40\ntitle: x\n\n# body\n" }),
    file: "bad/open.md",
    line: 1,
  },
  FRONTMATTER_YAML: {
    plants: "`title: a: b`, a nested mapping in a compact one",
    run: () => validateInMemory({ ...baseSuite(), "bad/yaml.md": t.yaml }),
    file: "bad/yaml.md",
    line: lineOf(t.yaml, "title:"),
    col: colOf(t.yaml, lineOf(t.yaml, "title:"), "a: b"),
  },
  FRONTMATTER_NOT_MAPPING: {
    plants: "frontmatter that is a YAML list",
    run: () => validateInMemory({ ...baseSuite(), "bad/list.md": "---\n- MD-40\n- MD-41\n---\nbody\n" }),
    file: "bad/list.md",
    line: 2,
  },
  PROMPT_ID_MISSING: {
    plants: "frontmatter without prompt_id",
    run: () => validateInMemory({ ...baseSuite(), "bad/noid.md": "---\ntitle: no id\n---\nbody\n" }),
    file: "bad/noid.md",
    line: 2,
  },
  PROMPT_ID_FORMAT: {
    plants: "`prompt_id: md-40` (lower case)",
    run: () => validateInMemory({ ...baseSuite(), "bad/id.md": t.idFormat }),
    file: "bad/id.md",
    line: lineOf(t.idFormat, "prompt_id:"),
    field: "prompt_id",
  },
  PROMPT_ID_DUPLICATE: {
    plants: "a second file declaring MD-10",
    run: () => validateInMemory({ ...baseSuite(), "zz/md-10-copy.md": plannerText("MD-10", "MD-11") }),
    file: "zz/md-10-copy.md",
    line: 2,
    promptId: "MD-10",
  },
  FIELD_TYPE: {
    plants: "`title` given as a list",
    run: () => validateInMemory({ ...baseSuite(), "ops/md-40.md": t.fieldType }),
    file: "ops/md-40.md",
    line: lineOf(t.fieldType, "title:"),
    field: "title",
  },
  FIELD_VALUE: {
    plants: "`default_mode: FAST_AND_LOOSE`, not a mode",
    run: () => validateInMemory({ ...baseSuite(), "ops/md-40.md": t.fieldValue }),
    file: "ops/md-40.md",
    line: lineOf(t.fieldValue, "default_mode:"),
    field: "default_mode",
  },
  FIELD_MISSPELT: {
    plants: "`dry_run_requried: true` on an executor, a rule that would be ignored",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-11"]]: t.misspelt }),
    file: BASE_FILES["MD-11"],
    line: lineOf(t.misspelt, "dry_run_requried:"),
    promptId: "MD-11",
    field: "dry_run_requried",
  },
  PAIR_TARGET_MISSING: {
    plants: "planner MD-10 naming MD-99, which does not exist",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-10"]]: t.targetMissing }),
    file: BASE_FILES["MD-10"],
    line: lineOf(t.targetMissing, "paired_prompt_id:"),
    promptId: "MD-10",
    field: "paired_prompt_id",
  },
  PAIR_NOT_RECIPROCAL: {
    plants: "a third planner MD-14 naming MD-11, whose twin is MD-10",
    run: () => validateInMemory({ ...baseSuite(), "pairs/md-14-planner.md": t.notReciprocal }),
    file: "pairs/md-14-planner.md",
    line: lineOf(t.notReciprocal, "paired_prompt_id:"),
    promptId: "MD-14",
    field: "paired_prompt_id",
  },
  PAIR_ROLE: {
    plants: "planner MD-10 with `prompt_role: operational`",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-10"]]: t.role }),
    file: BASE_FILES["MD-10"],
    line: lineOf(t.role, "prompt_role:"),
    promptId: "MD-10",
    field: "prompt_role",
  },
  PAIR_METADATA: {
    plants: "planner MD-10 with `exact_twin_only: false`",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-10"]]: t.metadata }),
    file: BASE_FILES["MD-10"],
    line: lineOf(t.metadata, "exact_twin_only:"),
    promptId: "MD-10",
    field: "exact_twin_only",
  },
  PAIR_REQUIRED_WITHOUT_TWIN: {
    plants: "unpaired MD-20 with `pairing_required: true` and `paired_prompt_id: null`",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-20"]]: t.requiredWithoutTwin }),
    file: BASE_FILES["MD-20"],
    line: lineOf(t.requiredWithoutTwin, "pairing_required:"),
    promptId: "MD-20",
    field: "pairing_required",
  },
  PAIR_TWIN_WITHOUT_REQUIRED: {
    plants: "planner MD-10 naming its twin with `pairing_required: false`",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-10"]]: t.twinWithoutRequired }),
    file: BASE_FILES["MD-10"],
    line: lineOf(t.twinWithoutRequired, "pairing_required:"),
    promptId: "MD-10",
    field: "pairing_required",
  },
  PAIR_EXECUTOR_REQUIRES: {
    plants: "executor MD-11 whose `requires` omits its planner MD-10",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-11"]]: t.executorRequires }),
    file: BASE_FILES["MD-11"],
    line: lineOf(t.executorRequires, "requires:"),
    promptId: "MD-11",
    field: "requires",
  },
  OVERRIDE_KEY: {
    plants: "planner MD-10 with `fallback_executor: MD-20`",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-10"]]: t.override }),
    file: BASE_FILES["MD-10"],
    line: lineOf(t.override, "fallback_executor:"),
    promptId: "MD-10",
    field: "fallback_executor",
  },
  REF_UNKNOWN: {
    plants: "MD-20 requiring MD-77, which does not exist",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-20"]]: t.refUnknown }),
    file: BASE_FILES["MD-20"],
    line: lineOf(t.refUnknown, "requires:"),
    col: colOf(t.refUnknown, lineOf(t.refUnknown, "requires:"), "MD-77"),
    promptId: "MD-20",
    field: "requires",
  },
  REF_SELF: {
    plants: "MD-20 listing itself in related_prompts",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-20"]]: t.refSelf }),
    file: BASE_FILES["MD-20"],
    line: lineOf(t.refSelf, "related_prompts:"),
    col: colOf(t.refSelf, lineOf(t.refSelf, "related_prompts:"), "MD-20"),
    promptId: "MD-20",
    field: "related_prompts",
  },
  REF_CYCLE: {
    plants: "control prompts MD-01 and MD-02 requiring each other",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-01"]]: t.cycleA, "control/md-02.md": t.cycleB }),
    file: BASE_FILES["MD-01"],
    line: lineOf(t.cycleA, "requires:"),
    severity: "warning",
    promptId: "MD-01",
  },
  REF_CYCLE_PAIRED: {
    plants: "planner MD-10 requiring its own executor MD-11 (which requires MD-10)",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-10"]]: t.cyclePaired }),
    file: BASE_FILES["MD-10"],
    line: lineOf(t.cyclePaired, "requires:"),
    promptId: "MD-10",
  },
  PAIR_COUNT: {
    plants: "--expect-pairs 3 on a suite with 2 genuine pairs",
    run: () => validateInMemory(baseSuite(), { expectPairs: 3 }),
    file: ".",
    line: 1,
  },
  BODY_BLOCK_MISSING: {
    plants: "planner MD-10 without <handoff_contract>",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-10"]]: t.blockMissing }),
    file: BASE_FILES["MD-10"],
    line: bodyLineOf(t.blockMissing),
    promptId: "MD-10",
    field: "handoff_contract",
  },
  BODY_BLOCK_UNCLOSED: {
    plants: "MD-20's <tool_policy> never closed",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-20"]]: t.blockUnclosed }),
    file: BASE_FILES["MD-20"],
    line: lineOf(t.blockUnclosed, "<tool_policy>"),
    promptId: "MD-20",
    field: "tool_policy",
  },
  BODY_PLACEHOLDER: {
    plants: "MD-20's <tool_policy> still holding the placeholder validate --fix writes",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-20"]]: t.placeholder }),
    file: BASE_FILES["MD-20"],
    line: lineOf(t.placeholder, "<tool_policy>"),
    promptId: "MD-20",
    field: "tool_policy",
  },
  BODY_MARKER_MISSING: {
    plants: "MD-20's <runtime_markers> without =VERIFY:{id}",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-20"]]: t.markerMissing }),
    file: BASE_FILES["MD-20"],
    line: lineOf(t.markerMissing, "<runtime_markers>"),
    promptId: "MD-20",
    field: "runtime_markers",
  },
  BODY_PHRASE_MISSING: {
    plants: "MD-10's gate saying `freeze again` instead of `re-freeze`",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-10"]]: t.phraseMissing }),
    file: BASE_FILES["MD-10"],
    line: lineOf(t.phraseMissing, "<plan_review_and_execution_gate>"),
    promptId: "MD-10",
    field: "plan_review_and_execution_gate",
  },
  BODY_TWIN_NOT_NAMED: {
    plants: "MD-10's gate that never names MD-11",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-10"]]: t.twinNotNamed }),
    file: BASE_FILES["MD-10"],
    line: lineOf(t.twinNotNamed, "<plan_review_and_execution_gate>"),
    promptId: "MD-10",
    field: "plan_review_and_execution_gate",
  },
  BODY_ALTERNATE_EXECUTOR: {
    plants: "MD-10's gate offering MD-20 when MD-11 is busy",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-10"]]: t.alternate }),
    file: BASE_FILES["MD-10"],
    line: lineOf(t.alternate, "<plan_review_and_execution_gate>"),
    severity: "warning",
    promptId: "MD-10",
  },
  BODY_COPIED_VERIFICATION: {
    plants: "executor MD-11 repeating a bullet of MD-10's <verification_design>",
    run: () => validateInMemory({ ...baseSuite(), [BASE_FILES["MD-11"]]: t.copied }),
    file: BASE_FILES["MD-11"],
    line: lineContaining(t.copied, "- Error rate stays under"),
    promptId: "MD-11",
  },
  BODY_HIDDEN_TEXT: {
    plants: "tag characters (invisible on a terminal, read by a model) in MD-11's body",
    run: () =>
      validateInMemory({
        ...baseSuite(),
        [BASE_FILES["MD-11"]]: `${baseSuite()[BASE_FILES["MD-11"]]}\nAll good.\u{E0072}\u{E0075}\u{E006E}\n`,
      }),
    file: BASE_FILES["MD-11"],
    line: (baseSuite()[BASE_FILES["MD-11"]] as string).split("\n").length + 1,
    col: "All good.".length + 1,
    promptId: "MD-11",
  },
  GRAPH_STALE: {
    plants: "a retitled MD-30 after the graph was committed (validate checks the committed graph)",
    run: () => {
      const root = copyExampleSuite();
      const file = path.join(root, "debugging/md-30-debugging-executor.md");
      const text = readFileSync(file, "utf8");
      expect(text).toContain("title: Debugging fix executor\n");
      writeFileSync(file, text.replace("title: Debugging fix executor\n", "title: Debugging fix executor v2\n"));
      return validateSuite(loadSuite(root)).diagnostics;
    },
    file: "capability-graph.json",
    line: 0, // set below the table
    col: 1,
  },
  STATE_MACHINE: {
    plants: "a transition table with no `admitted` row",
    run: () => checkStateMachine(TRANSITIONS.filter((row) => row.event !== "admitted")),
    file: "(runtime transition table)",
    line: 1,
  },
  TWIN_REFUSAL: {
    plants: "a runtime judgement that accepts any executive (swapped in for this fixture only)",
    run: () => {
      judgement.lenient = true;
      return validateInMemory(baseSuite());
    },
    file: BASE_FILES["MD-10"],
    line: 1,
    promptId: "MD-10",
  },
  CONFIG_INVALID: {
    plants: "twinlock.yaml with the misspelt key `declared_pair`",
    run: () => validateOnDisk({ ...baseSuite(), "twinlock.yaml": t.config }),
    file: "twinlock.yaml",
    line: lineOf(t.config, "declared_pair:"),
    col: 1,
  },
  SUITE_UNSIGNED: {
    plants: "twinlock.yaml with a suite_id and require_signed_receipts: false",
    run: () => validateOnDisk({ ...baseSuite(), "twinlock.yaml": t.unsigned }),
    file: "twinlock.yaml",
    line: lineOf(t.unsigned, "policies:"),
    col: 1,
    severity: "warning",
  },
};

// The first line of the committed graph that the retitling changes: MD-30's title.
FIXTURES.GRAPH_STALE.line = lineContaining(
  readFileSync(path.join(EXAMPLE_SUITE, "capability-graph.json"), "utf8"),
  '"title": "Debugging fix executor"',
);

describe("diagnostic codes", () => {
  it("has a triggering fixture for every code in DIAGNOSTIC_CODES, and none for unknown codes", () => {
    const missing = DIAGNOSTIC_CODES.filter((code) => !(code in FIXTURES));
    const unknown = Object.keys(FIXTURES).filter((code) => !(DIAGNOSTIC_CODES as readonly string[]).includes(code));
    expect(missing, `codes without a fixture: ${missing.join(", ")}`).toEqual([]);
    expect(unknown).toEqual([]);
  });

  describe.each(DIAGNOSTIC_CODES.map((code) => [code, FIXTURES[code]] as const))("%s", (code, fixture) => {
    it(`is reported at the offending file and line for ${fixture.plants}`, async () => {
      const diagnostics = await fixture.run();
      const hits = diagnostics.filter((d) => d.code === code);
      expect(hits.length, `no ${code} among: ${diagnostics.map((d) => `${d.file}:${d.line} ${d.code}`).join("; ")}`).toBeGreaterThan(0);
      const hit = hits.find((d) => d.file === fixture.file) ?? hits[0];
      expect(hit?.file).toBe(fixture.file);
      expect(hit?.line).toBe(fixture.line);
      if (fixture.col !== undefined) expect(hit?.col).toBe(fixture.col);
      expect(hit?.severity).toBe(fixture.severity ?? "error");
      if (fixture.promptId !== undefined) expect(hit?.promptId).toBe(fixture.promptId);
      if (fixture.field !== undefined) expect(hit?.field).toBe(fixture.field);
      expect(hit?.message.length).toBeGreaterThan(0);
    });
  });
});
