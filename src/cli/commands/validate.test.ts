import { chmodSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Diagnostic } from "../../diagnostics/diagnostic.js";
import {
  BASE_FILES,
  baseSuite,
  DEFAULT_VERIFICATION_ITEMS,
  executorText,
  gateText,
  lineContaining,
  lineOf,
  plannerText,
  unpairedText,
} from "../../test-support/prompt-builder.js";
import { runCli, runCliJson, STACK_FRAME } from "../../test-support/run-cli.js";
import {
  copyExampleSuite,
  EXAMPLE_SUITE,
  makeOverlongFile,
  makeTempDir,
  removeTempDirs,
  runningAsRoot,
  writeSuite,
} from "../../test-support/temp-suite.js";

afterAll(removeTempDirs);

interface ValidateJson {
  ok: boolean;
  prompts: number;
  genuine_pairs: number;
  declared_pairs: number | null;
  errors: number;
  warnings: number;
  diagnostics: Diagnostic[];
}

const validate = (root: string, ...extra: string[]) => runCli(["validate", "--suite", root, ...extra]);
const validateJson = (root: string, ...extra: string[]) => runCliJson<ValidateJson>(["validate", "--suite", root, ...extra]);
const bodyLineOf = (text: string) => text.split("\n").indexOf("---", 1) + 2;

describe("validate on the example suite", () => {
  it("exits 0 and prints the summary with 6 genuine pairs, as declared", async () => {
    const run = await validate(EXAMPLE_SUITE);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("prompts    16 (6 investigative, 7 executive, 1 operational, 1 gate, 1 control)");
    expect(run.stdout).toContain(
      "pairs      6 genuine (declared 6): MD-27→MD-28 MD-29→MD-30 MD-31→MD-32 MD-33→MD-34 MD-35→MD-36 MD-37→MD-38",
    );
    expect(run.stdout).toMatch(/refusal {4}6 twins accepted and every other executive refused \(\d+ judgements\)/);
    expect(run.stdout).toContain("problems   0, warnings 0");
  });

  it("prints one JSON document with --json", async () => {
    const run = await validateJson(EXAMPLE_SUITE);
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({ ok: true, prompts: 16, genuine_pairs: 6, declared_pairs: 6, errors: 0, warnings: 0, diagnostics: [] });
  });

  it("passes --expect-pairs 6 and fails --expect-pairs 7", async () => {
    expect((await validate(EXAMPLE_SUITE, "--expect-pairs", "6")).code).toBe(0);
    const run = await validate(EXAMPLE_SUITE, "--expect-pairs", "7");
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^\.:1:1 PAIR_COUNT the suite has 6 genuine pairs, but --expect-pairs declares 7/m);
  });

  it("finds the suite through TWINLOCK_SUITE when --suite is not given", async () => {
    const saved = process.env.TWINLOCK_SUITE;
    process.env.TWINLOCK_SUITE = EXAMPLE_SUITE;
    try {
      expect((await runCli(["validate"])).code).toBe(0);
    } finally {
      if (saved === undefined) delete process.env.TWINLOCK_SUITE;
      else process.env.TWINLOCK_SUITE = saved;
    }
  });
});

interface PlantedDefect {
  name: string;
  files: Record<string, string>;
  args?: string[];
  code: Diagnostic["code"];
  file: string;
  line: number;
  prompt_id?: string;
  /** Field or block that the problem line must name. */
  names: string;
}

const p10 = BASE_FILES["MD-10"];
const e11 = BASE_FILES["MD-11"];
const u20 = BASE_FILES["MD-20"];

function planner(overrides: Record<string, unknown>, body = {}) {
  return plannerText("MD-10", "MD-11", { frontmatter: overrides, body });
}
function executor(overrides: Record<string, unknown>, body = {}) {
  return executorText("MD-11", "MD-10", { frontmatter: overrides, body });
}

function keyDefect(who: "planner" | "executor", key: string, value: unknown, code: Diagnostic["code"] = "PAIR_METADATA"): PlantedDefect {
  const text = who === "planner" ? planner({ [key]: value }) : executor({ [key]: value });
  const id = who === "planner" ? "MD-10" : "MD-11";
  const file = who === "planner" ? p10 : e11;
  const missing = value === undefined;
  return {
    name: `${missing ? "a missing" : "a wrong"} ${key} on the ${who}`,
    files: { [file]: text },
    code,
    file,
    line: missing ? 1 : lineOf(text, `${key}:`),
    prompt_id: id,
    names: key,
  };
}

const d = {
  nonReciprocal: plannerText("MD-14", "MD-11"),
  missingTwin: planner({ paired_prompt_id: "MD-99" }),
  wrongRole: planner({ prompt_role: "gate" }),
  noRequires: executor({ requires: ["MD-01"] }),
  requiredWithoutTwin: unpairedText("MD-20", "executive", { frontmatter: { pairing_required: true } }),
  unknownRequires: unpairedText("MD-20", "executive", { frontmatter: { requires: ["MD-01", "MD-77"] } }),
  unknownRelated: unpairedText("MD-20", "executive", { frontmatter: { related_prompts: ["MD-78"] } }),
  selfRequires: unpairedText("MD-20", "executive", { frontmatter: { requires: ["MD-01", "MD-20"] } }),
  pairedCycle: planner({ requires: ["MD-01", "MD-11"] }),
  noHandoffContract: planner({}, { omit: ["handoff_contract"] }),
  noDecisionRules: executor({}, { omit: ["decision_rules"] }),
  noMarker: unpairedText("MD-20", "executive", {
    body: { markers: ["@EVIDENCE:{id}", "?UNKNOWN:{id}", "#FINDING:{id}", "+ACTION:{id}", "=VERIFY:{id}"] },
  }),
  noPhrase: planner({}, { blocks: { plan_review_and_execution_gate: gateText("MD-11").replace("user review", "a look") } }),
  twinNotNamed: planner({}, { blocks: { plan_review_and_execution_gate: gateText("its executor") } }),
  copied: executor({}, { extra: `- ${DEFAULT_VERIFICATION_ITEMS[0]}` }),
  override: (key: string, value: unknown) => planner({ [key]: value }),
};

const DEFECTS: PlantedDefect[] = [
  {
    name: "a non-reciprocal twin (MD-14 names MD-11, which names MD-10)",
    files: { "pairs/md-14-planner.md": d.nonReciprocal },
    code: "PAIR_NOT_RECIPROCAL",
    file: "pairs/md-14-planner.md",
    line: lineOf(d.nonReciprocal, "paired_prompt_id:"),
    prompt_id: "MD-14",
    names: "MD-11",
  },
  {
    name: "a missing twin (MD-10 names MD-99)",
    files: { [p10]: d.missingTwin },
    code: "PAIR_TARGET_MISSING",
    file: p10,
    line: lineOf(d.missingTwin, "paired_prompt_id:"),
    prompt_id: "MD-10",
    names: "paired_prompt_id",
  },
  {
    name: "a wrong role (planner MD-10 is a gate)",
    files: { [p10]: d.wrongRole },
    code: "PAIR_ROLE",
    file: p10,
    line: lineOf(d.wrongRole, "prompt_role:"),
    prompt_id: "MD-10",
    names: "investigative",
  },
  keyDefect("planner", "prompt_role", undefined, "PAIR_ROLE"),
  keyDefect("planner", "pairing_required", false, "PAIR_TWIN_WITHOUT_REQUIRED"),
  keyDefect("planner", "pairing_required", undefined),
  keyDefect("planner", "plan_review_required", false),
  keyDefect("planner", "plan_review_required", undefined),
  keyDefect("planner", "execution_consent_required", "true"),
  keyDefect("planner", "execution_consent_required", undefined),
  keyDefect("planner", "exact_twin_only", false),
  keyDefect("planner", "exact_twin_only", undefined),
  keyDefect("planner", "review_cycle", "review_then_consent"),
  keyDefect("planner", "review_cycle", undefined),
  { ...keyDefect("executor", "prompt_role", "operational", "PAIR_ROLE"), names: "found operational" },
  keyDefect("executor", "prompt_role", undefined, "PAIR_ROLE"),
  keyDefect("executor", "pairing_required", false, "PAIR_TWIN_WITHOUT_REQUIRED"),
  keyDefect("executor", "pairing_required", undefined),
  keyDefect("executor", "accepted_planning_prompt_id", "MD-12"),
  keyDefect("executor", "accepted_planning_prompt_id", undefined),
  keyDefect("executor", "reviewed_handoff_required", false),
  keyDefect("executor", "reviewed_handoff_required", undefined),
  keyDefect("executor", "execution_consent_required", false),
  keyDefect("executor", "execution_consent_required", undefined),
  keyDefect("executor", "exact_twin_only", "yes"),
  keyDefect("executor", "exact_twin_only", undefined),
  {
    name: "the planner's paired_prompt_id removed",
    files: { [p10]: planner({ paired_prompt_id: undefined }) },
    code: "PAIR_REQUIRED_WITHOUT_TWIN",
    file: p10,
    line: lineOf(planner({ paired_prompt_id: undefined }), "pairing_required:"),
    prompt_id: "MD-10",
    names: "paired_prompt_id",
  },
  {
    name: "an executor that does not require its planner",
    files: { [e11]: d.noRequires },
    code: "PAIR_EXECUTOR_REQUIRES",
    file: e11,
    line: lineOf(d.noRequires, "requires:"),
    prompt_id: "MD-11",
    names: "requires",
  },
  {
    name: "pairing_required: true without a twin",
    files: { [u20]: d.requiredWithoutTwin },
    code: "PAIR_REQUIRED_WITHOUT_TWIN",
    file: u20,
    line: lineOf(d.requiredWithoutTwin, "pairing_required:"),
    prompt_id: "MD-20",
    names: "pairing_required",
  },
  ...(
    [
      ["execution_twin", "MD-20"],
      ["fallback_executor", "MD-20"],
      ["preferred_executor", "MD-20"],
      ["backup_runner_prompt", "MD-28"],
      ["routing", { executor: "MD-20" }],
    ] as const
  ).map(
    ([key, value]): PlantedDefect => ({
      name: `an override key ${key}`,
      files: { [p10]: d.override(key, value) },
      code: "OVERRIDE_KEY",
      file: p10,
      line: lineOf(d.override(key, value), `${key}:`),
      prompt_id: "MD-10",
      names: key,
    }),
  ),
  {
    name: "an unknown ID in requires",
    files: { [u20]: d.unknownRequires },
    code: "REF_UNKNOWN",
    file: u20,
    line: lineOf(d.unknownRequires, "requires:"),
    prompt_id: "MD-20",
    names: "MD-77",
  },
  {
    name: "an unknown ID in related_prompts",
    files: { [u20]: d.unknownRelated },
    code: "REF_UNKNOWN",
    file: u20,
    line: lineOf(d.unknownRelated, "related_prompts:"),
    prompt_id: "MD-20",
    names: "related_prompts",
  },
  {
    name: "a self reference",
    files: { [u20]: d.selfRequires },
    code: "REF_SELF",
    file: u20,
    line: lineOf(d.selfRequires, "requires:"),
    prompt_id: "MD-20",
    names: "requires",
  },
  {
    name: "a requires cycle through a paired prompt",
    files: { [p10]: d.pairedCycle },
    code: "REF_CYCLE_PAIRED",
    file: p10,
    line: lineOf(d.pairedCycle, "requires:"),
    prompt_id: "MD-10",
    names: "requires",
  },
  {
    name: "a declared pair count in twinlock.yaml that does not match",
    files: { "twinlock.yaml": "suite_id: fixture\ndeclared_pairs: 3\n" },
    code: "PAIR_COUNT",
    file: "twinlock.yaml",
    line: lineOf("suite_id: fixture\ndeclared_pairs: 3\n", "declared_pairs:"),
    names: "declared_pairs",
  },
  {
    name: "--expect-pairs that does not match",
    files: {},
    args: ["--expect-pairs", "1"],
    code: "PAIR_COUNT",
    file: ".",
    line: 1,
    names: "--expect-pairs",
  },
  {
    name: "a planner body without <handoff_contract>",
    files: { [p10]: d.noHandoffContract },
    code: "BODY_BLOCK_MISSING",
    file: p10,
    line: bodyLineOf(d.noHandoffContract),
    prompt_id: "MD-10",
    names: "<handoff_contract>",
  },
  {
    name: "an executor body without <decision_rules>",
    files: { [e11]: d.noDecisionRules },
    code: "BODY_BLOCK_MISSING",
    file: e11,
    line: bodyLineOf(d.noDecisionRules),
    prompt_id: "MD-11",
    names: "<decision_rules>",
  },
  {
    name: "a marker missing from <runtime_markers>",
    files: { [u20]: d.noMarker },
    code: "BODY_MARKER_MISSING",
    file: u20,
    line: lineOf(d.noMarker, "<runtime_markers>"),
    prompt_id: "MD-20",
    names: "!STOP:{reason}",
  },
  {
    name: "a gate phrase missing",
    files: { [p10]: d.noPhrase },
    code: "BODY_PHRASE_MISSING",
    file: p10,
    line: lineOf(d.noPhrase, "<plan_review_and_execution_gate>"),
    prompt_id: "MD-10",
    names: '"user review"',
  },
  {
    name: "a gate that does not name the twin",
    files: { [p10]: d.twinNotNamed },
    code: "BODY_TWIN_NOT_NAMED",
    file: p10,
    line: lineOf(d.twinNotNamed, "<plan_review_and_execution_gate>"),
    prompt_id: "MD-10",
    names: "<plan_review_and_execution_gate>",
  },
  {
    name: "an executor copying a verification_design bullet",
    files: { [e11]: d.copied },
    code: "BODY_COPIED_VERIFICATION",
    file: e11,
    line: lineContaining(d.copied, DEFAULT_VERIFICATION_ITEMS[0]),
    prompt_id: "MD-11",
    names: "<verification_design>",
  },
];

describe("validate on planted defects", () => {
  it("passes the unplanted base suite", async () => {
    const run = await validate(writeSuite(baseSuite()));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("pairs      2 genuine (declared 2)");
  });

  it.each(DEFECTS)("exits 1 for $name, naming the prompt, file, line and field", async (defect) => {
    const root = writeSuite({ ...baseSuite(), ...defect.files });
    const run = await validate(root, ...(defect.args ?? []));
    expect(run.code).toBe(1);
    expect(run.output).not.toMatch(STACK_FRAME);
    const problem = run.stdout.split("\n").find((l) => l.startsWith(`${defect.file}:${defect.line}:`) && l.includes(` ${defect.code} `));
    expect(problem, `no "${defect.file}:${defect.line}:… ${defect.code}" line in:\n${run.stdout}`).toBeDefined();
    if (defect.prompt_id) expect(problem).toContain(defect.prompt_id);
    expect(problem).toContain(defect.names);
    expect(run.stdout).toMatch(/^problems {3}[1-9]\d*, warnings \d+$/m);
  });

  // The wrong-role line points at the prompt_role key, and its text names the key.
  it("names the prompt_role key in the text of a wrong-role problem", async () => {
    const run = await validate(writeSuite({ ...baseSuite(), [p10]: d.wrongRole }));
    const problem = run.stdout.split("\n").find((l) => l.startsWith(`${p10}:${lineOf(d.wrongRole, "prompt_role:")}:`));
    expect(problem).toContain(
      "PAIR_ROLE MD-10: `prompt_role` of a paired prompt must be `investigative` (planner) or `executive` (executor), found gate",
    );
  });

  it("reports a prompt_role that is not a role as what it found, in the pair problem and the summary, and points to new-pair and the reference", async () => {
    const pair = (id: string, role: string, twin: string) =>
      `---\nprompt_id: ${id}\ntitle: ${id}\nprompt_role: ${role}\npairing_required: true\npaired_prompt_id: ${twin}\n---\nbody\n`;
    const run = await validate(writeSuite({ "a.md": pair("MD-1", "planner", "MD-2"), "b.md": pair("MD-2", "executive", "MD-1") }));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      'PAIR_ROLE MD-1: `prompt_role` of a paired prompt must be `investigative` (planner) or `executive` (executor), found "planner" (not a role)',
    );
    expect(run.stdout).toContain('PAIR_ROLE MD-2: twin MD-1 has prompt_role "planner" (not a role), but');
    expect(run.stdout).not.toMatch(/found none|\bnone\)/);
    expect(run.stdout).toMatch(/^prompts {4}2 \(1 executive, 1 "planner" \(not a role\)\)$/m);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe(
      'a pair lacks its metadata or body blocks: `twinlock new-pair` writes a new pair with all of them; docs/reference.md, section "The prompt suite" (a paired planner, a paired executor, bodies), lists what an existing pair must carry',
    );
    // The section it names exists, and says what a paired planner carries.
    const reference = readFileSync(path.join(import.meta.dirname, "../../../docs/reference.md"), "utf8");
    expect(reference).toMatch(/^## The prompt suite\n[^]*?A \*\*paired planner\*\* carries exactly/m);
  });

  it("adds no pointer to new-pair when no pair lacks metadata or body blocks", async () => {
    const run = await validate(writeSuite({ ...baseSuite(), [p10]: d.wrongRole }));
    expect(run.stdout).not.toContain("twinlock new-pair");
  });

  it("exits 0 on a requires cycle among unpaired control prompts, printing it as a warning", async () => {
    const a = unpairedText("MD-01", "control", { frontmatter: { requires: ["MD-02"] } });
    const root = writeSuite({
      ...baseSuite(),
      [BASE_FILES["MD-01"]]: a,
      "control/md-02.md": unpairedText("MD-02", "control", { frontmatter: { requires: ["MD-01"] } }),
    });
    const run = await validate(root);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${BASE_FILES["MD-01"]}:${lineOf(a, "requires:")}:1 REF_CYCLE (warning)`);
    // The fixture suite has a suite_id and no signing policy, so it is also warned about as unsigned.
    expect(run.stdout).toMatch(/^twinlock\.yaml:\d+:1 SUITE_UNSIGNED \(warning\) suite fixture does not require signed receipts/m);
    expect(run.stdout).toContain("problems   0, warnings 2");
  });

  it("reports a misspelt twinlock.yaml key alone, with no unsigned warning about the policies it could not read", async () => {
    const files = baseSuite();
    files["twinlock.yaml"] = `${files["twinlock.yaml"]}polices: {}\n`;
    const run = await validate(writeSuite(files));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/CONFIG_INVALID polices: unknown key `polices` \(did you mean `policies`\?\)/);
    expect(run.stdout).not.toMatch(/SUITE_UNSIGNED/);
  });

  it("exits 0 for a harmless unknown key such as owner_team: platform", async () => {
    const root = writeSuite({ ...baseSuite(), [p10]: planner({ owner_team: "platform" }) });
    expect((await validate(root)).code).toBe(0);
  });

  it("exits 0 for the gate phrase written `User   Review`", async () => {
    const gate = gateText("MD-11").replace("user review", "User   Review");
    const root = writeSuite({ ...baseSuite(), [p10]: planner({}, { blocks: { plan_review_and_execution_gate: gate } }) });
    expect((await validate(root)).code).toBe(0);
  });

  it("reports the genuine pair count after a defect, lower than declared", async () => {
    const root = writeSuite({ ...baseSuite(), [p10]: planner({ exact_twin_only: false }) });
    const run = await validateJson(root);
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({ ok: false, genuine_pairs: 1, declared_pairs: 2 });
    expect(run.json.diagnostics.map((x) => x.code)).toContain("PAIR_COUNT");
  });
});

describe("validate checks the committed capability graph", () => {
  const retitle = (root: string) => {
    const file = path.join(root, "debugging/md-30-debugging-executor.md");
    writeFileSync(file, readFileSync(file, "utf8").replace("title: Debugging fix executor\n", "title: Debugging fix executor (renamed)\n"));
  };

  it("exits 1 with GRAPH_STALE at the first differing line when a prompt changed after the graph was committed", async () => {
    const root = copyExampleSuite();
    const committed = readFileSync(path.join(root, "capability-graph.json"), "utf8");
    retitle(root);
    const run = await validateJson(root);
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({ ok: false, errors: 1, warnings: 0, genuine_pairs: 6 });
    expect(run.json.diagnostics).toEqual([
      {
        code: "GRAPH_STALE",
        severity: "error",
        file: "capability-graph.json",
        line: lineOf(committed, '      "title": "Debugging fix executor",'),
        col: 1,
        message: expect.stringContaining(
          `refresh it with: twinlock graph --suite ${root} --out ${path.join(root, "capability-graph.json")}`,
        ),
      },
    ]);
    const text = await validate(root);
    expect(text.stdout).toMatch(/^capability-graph\.json:\d+:1 GRAPH_STALE /m);
    expect(text.stdout).toContain("problems   1, warnings 0");
  });

  it("passes again once the graph is refreshed", async () => {
    const root = copyExampleSuite();
    retitle(root);
    expect((await runCli(["graph", "--suite", root, "--out", path.join(root, "capability-graph.json")])).code).toBe(0);
    const run = await validate(root);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).not.toContain("GRAPH_STALE");
  });

  it("reports a graph_file named in twinlock.yaml that does not exist, at 1:1", async () => {
    const root = writeSuite({ ...baseSuite(), "twinlock.yaml": "suite_id: fixture\ndeclared_pairs: 2\ngraph_file: docs/graph.json\n" });
    const run = await validate(root);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^docs\/graph\.json:1:1 GRAPH_STALE the graph file does not exist; refresh it with: twinlock graph /m);
  });

  it("checks a capability-graph.json at the suite root even when twinlock.yaml names no graph_file", async () => {
    const root = writeSuite(baseSuite());
    const graphFile = path.join(root, "capability-graph.json");
    expect((await runCli(["graph", "--suite", root, "--out", graphFile])).code).toBe(0);
    expect((await validate(root)).code).toBe(0);
    writeFileSync(graphFile, readFileSync(graphFile, "utf8").replace('"suite_id": "fixture"', '"suite_id": "other"'));
    const run = await validate(root);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^capability-graph\.json:\d+:1 GRAPH_STALE /m);
  });

  it("does not look for a graph when the suite has neither graph_file nor capability-graph.json", async () => {
    const run = await validateJson(writeSuite(baseSuite()));
    expect(run.code).toBe(0);
    expect(run.json.diagnostics.map((x) => x.code)).not.toContain("GRAPH_STALE");
  });
});

describe("validate on bad input never crashes", () => {
  const expectClean = (output: string) => {
    expect(output).not.toMatch(STACK_FRAME);
    expect(output).not.toContain("internal error");
  };
  const located = async (
    files: Record<string, string | Uint8Array>,
    code: Diagnostic["code"],
    file: string,
    line: number,
    setup?: (root: string) => void,
  ) => {
    const root = writeSuite({ ...baseSuite(), ...files });
    setup?.(root);
    const run = await validate(root);
    expectClean(run.output);
    expect(run.stdout).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:${line}:\\d+ ${code}`, "m"));
    return run;
  };

  it("reports malformed YAML at its line and exits 1", async () => {
    const run = await located({ "bad/yaml.md": "---\nprompt_id: MD-40\ntitle: a: b\n---\n" }, "FRONTMATTER_YAML", "bad/yaml.md", 3);
    expect(run.code).toBe(1);
  });

  it("reports a file without frontmatter", async () => {
    expect((await located({ "bad/none.md": "# Just notes\n" }, "FRONTMATTER_MISSING", "bad/none.md", 1)).code).toBe(1);
  });

  it("reports frontmatter that is never closed", async () => {
    expect((await located({ "bad/open.md": "---\nprompt_id: MD-40\n" }, "FRONTMATTER_UNCLOSED", "bad/open.md", 1)).code).toBe(1);
  });

  it("reports frontmatter that is a list or a scalar", async () => {
    expect((await located({ "bad/list.md": "---\n- a\n---\n" }, "FRONTMATTER_NOT_MAPPING", "bad/list.md", 2)).code).toBe(1);
    expect((await located({ "bad/scalar.md": "---\n42\n---\n" }, "FRONTMATTER_NOT_MAPPING", "bad/scalar.md", 2)).code).toBe(1);
  });

  it("reports duplicate IDs naming both files", async () => {
    const run = await located({ "zz/copy.md": plannerText("MD-10", "MD-11") }, "PROMPT_ID_DUPLICATE", "zz/copy.md", 2);
    const line = run.stdout.split("\n").find((l) => l.startsWith("zz/copy.md:2:"));
    expect(line).toContain(p10);
    expect(line).toContain("zz/copy.md");
    expect(run.code).toBe(1);
  });

  it("reports non-UTF-8 bytes", async () => {
    const bytes = Buffer.concat([Buffer.from("---\nprompt_id: MD-40\ntitle: "), Buffer.from([0xff, 0xfe]), Buffer.from("\n---\n")]);
    expect((await located({ "bad/bytes.md": bytes }, "FILE_NOT_UTF8", "bad/bytes.md", 3)).code).toBe(1);
  });

  it("reports a NUL byte", async () => {
    const bytes = Buffer.concat([Buffer.from("---\nprompt_id: MD-40\n---\n"), Buffer.from([0]), Buffer.from("\n")]);
    expect((await located({ "bad/nul.md": bytes }, "FILE_NUL_BYTE", "bad/nul.md", 4)).code).toBe(1);
  });

  it("reports a 10 MB file as FILE_TOO_LARGE without reading it", async () => {
    const run = await located({}, "FILE_TOO_LARGE", "huge.md", 1, (root) => {
      writeFileSync(path.join(root, "huge.md"), "");
      truncateSync(path.join(root, "huge.md"), 10 * 1024 * 1024);
    });
    expect(run.stdout).not.toContain("FILE_NUL_BYTE");
    expect(run.code).toBe(1);
  });

  it("reports a symlink loop (ln -s . loop) as an error, exits 1, and still reads every real prompt", async () => {
    const run = await located({}, "SUITE_SYMLINK_SKIPPED", "loop", 1, (root) => symlinkSync(".", path.join(root, "loop")));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("prompts    6");
  });

  it("reports a file it cannot open (path over PATH_MAX, which stops root too)", async () => {
    const root = writeSuite(baseSuite());
    const rel = makeOverlongFile(root);
    const run = await validate(root);
    expectClean(run.output);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`${rel}:1:1 FILE_UNREADABLE`);
  });

  it("reports a file without read permission", async (ctx) => {
    ctx.skip(runningAsRoot(), "running as root: chmod 000 does not stop root from reading (the PATH_MAX test covers unreadable files)");
    const run = await located({}, "FILE_UNREADABLE", u20, 1, (root) => chmodSync(path.join(root, u20), 0o000));
    expect(run.code).toBe(1);
  });

  it("refuses an empty folder with exit 2 and one line on stderr", async () => {
    const run = await validate(makeTempDir());
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(/^twinlock: no \*\.md prompt files under .*--suite/);
    expectClean(run.output);
  });

  it("refuses a missing --suite folder with exit 2 and one line naming it", async () => {
    const run = await validate("/no/such/suite/here");
    expect(run.code).toBe(2);
    expect(run.stderr.trimEnd().split("\n")).toEqual([
      "twinlock: --suite /no/such/suite/here: no such folder; give the folder that holds the prompt files",
    ]);
    expectClean(run.output);
  });

  it("reports an unknown key in twinlock.yaml as CONFIG_INVALID at that key's line", async () => {
    const config = "suite_id: fixture\ndeclared_pairs: 2\nstrict_mode: true\n";
    const run = await located({ "twinlock.yaml": config }, "CONFIG_INVALID", "twinlock.yaml", lineOf(config, "strict_mode:"));
    expect(run.stdout).toContain("`strict_mode`");
    expect(run.code).toBe(1);
  });

  it("refuses --expect-pairs that is not a whole number with exit 2", async () => {
    const run = await validate(EXAMPLE_SUITE, "--expect-pairs", "six");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--expect-pairs takes a whole number, got "six"');
    expectClean(run.output);
  });

  it("gives one JSON error document for bad usage under --json", async () => {
    const run = await runCliJson<{ ok: boolean; error: { kind: string; message: string } }>(["validate", "--suite", "/no/such/suite/here"]);
    expect(run.code).toBe(2);
    expect(run.json).toMatchObject({ ok: false, error: { kind: "usage" } });
  });

  const aliasBomb = () => {
    const rows = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (const [name, prev] of [
      ["b", "a"],
      ["c", "b"],
      ["d", "c"],
    ])
      rows.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(", ")}]`);
    rows.push(`e: [${Array(10).fill("*d").join(", ")}]`);
    return rows.join("\n");
  };

  // See parse-prompt-file.test.ts. An alias bomb must not escape as an internal
  // error; it is a FRONTMATTER_YAML problem located at the start of the
  // frontmatter (the first line after the opening ---).
  it("reports an alias bomb in a prompt's frontmatter as a located FRONTMATTER_YAML problem", async () => {
    const run = await located({ "bad/bomb.md": `---\nprompt_id: MD-40\n${aliasBomb()}\n---\n` }, "FRONTMATTER_YAML", "bad/bomb.md", 2);
    expect(run.code).toBe(1);
  });

  it("reports an alias bomb in twinlock.yaml as CONFIG_INVALID instead of crashing", async () => {
    const run = await located({ "twinlock.yaml": `suite_id: fixture\n${aliasBomb()}\n` }, "CONFIG_INVALID", "twinlock.yaml", 1);
    expect(run.stdout).toMatch(/^twinlock\.yaml:1:1 CONFIG_INVALID invalid YAML: /m);
    expect(run.code).toBe(1);
  });
});

describe("validate's pair list", () => {
  it("lists pairs in natural ID order, MD-9 before MD-10 and MD-101 after MD-13", async () => {
    const root = writeSuite({
      ...baseSuite(),
      "work/md-101.md": plannerText("MD-101", "MD-102"),
      "work/md-102.md": executorText("MD-102", "MD-101"),
      "work/md-9.md": plannerText("MD-9", "MD-8"),
      "work/md-8.md": executorText("MD-8", "MD-9"),
      "twinlock.yaml": "suite_id: fixture\ndeclared_pairs: 4\n",
    });
    const run = await validate(root);
    expect(run.stdout).toContain("pairs      4 genuine (declared 4): MD-9→MD-8 MD-10→MD-11 MD-12→MD-13 MD-101→MD-102");
    const json = await runCli(["validate", "--suite", root, "--json"]);
    expect((JSON.parse(json.stdout) as { pairs: Array<{ planner: string }> }).pairs.map((p) => p.planner)).toEqual([
      "MD-9",
      "MD-10",
      "MD-12",
      "MD-101",
    ]);
  });
});
