import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { baseSuite } from "../../test-support/prompt-builder.js";
import { runCli, runCliJson, STACK_FRAME } from "../../test-support/run-cli.js";
import { copyExampleSuite, removeTempDirs, writeSuite } from "../../test-support/temp-suite.js";

afterAll(removeTempDirs);

/** How new-pair names a file it wrote: relative to the working folder when inside it, else absolute. */
const shown = (file: string) => (path.relative(process.cwd(), file).startsWith("..") ? file : path.relative(process.cwd(), file));

const NEW_PAIR = [
  "--planner",
  "MD-41",
  "--executor",
  "MD-42",
  "--planner-title",
  "Flaky integration test planner",
  "--executor-title",
  "Flaky integration test executor",
  "--category",
  "testing",
  "--requires",
  "MD-01",
];

describe("new-pair", () => {
  it("puts the pair under the fixed start of the prompts glob by default, where the suite reads it", async () => {
    const files: Record<string, string> = { "README.md": "# repo\n" };
    for (const [file, text] of Object.entries(baseSuite())) if (file !== "twinlock.yaml") files[`prompts/${file}`] = text;
    files["twinlock.yaml"] = 'suite_id: s\nprompts: ["prompts/**/*.md"]\n';
    const root = writeSuite(files);
    const created = await runCli(["new-pair", "--suite", root, ...NEW_PAIR]);
    expect(created.code, created.output).toBe(0);
    expect(readdirSync(path.join(root, "prompts", "testing")).sort()).toHaveLength(2);
  });

  it("scaffolds a pair into a copy of the example suite that passes validate with 7 genuine pairs and declared_pairs bumped to 7", async () => {
    const root = copyExampleSuite();
    const created = await runCli(["new-pair", "--suite", root, ...NEW_PAIR]);
    expect(created.code, created.output).toBe(0);
    expect(created.stdout).toContain("created pair MD-41 → MD-42");
    expect(created.stdout).toContain("declared_pairs in twinlock.yaml: 6 → 7");
    expect(created.stdout).toContain(`refreshed ${shown(path.join(root, "capability-graph.json"))}`);
    expect(created.stdout).toContain("validate: MD-41 resolves to exactly MD-42, bodies pass");
    expect(readdirSync(path.join(root, "testing")).sort()).toEqual([
      "md-41-flaky-integration-test-planner.md",
      "md-42-flaky-integration-test-executor.md",
    ]);

    const validated = await runCliJson<{ genuine_pairs: number; declared_pairs: number; errors: number; warnings: number }>([
      "validate",
      "--suite",
      root,
    ]);
    expect(validated.code).toBe(0);
    expect(validated.json).toMatchObject({ genuine_pairs: 7, declared_pairs: 7, errors: 0, warnings: 0 });

    const audited = await runCli(["audit-bodies", "--check", "--suite", root]);
    expect(audited.code).toBe(0);
    expect(audited.stdout).toContain("18 prompt bodies audited, 0 problems");
  });

  it("keeps the comments and other keys of twinlock.yaml when it bumps declared_pairs", async () => {
    const root = copyExampleSuite();
    const before = readFileSync(path.join(root, "twinlock.yaml"), "utf8");
    await runCli(["new-pair", "--suite", root, ...NEW_PAIR]);
    const after = readFileSync(path.join(root, "twinlock.yaml"), "utf8");
    expect(after).toBe(before.replace("declared_pairs: 6", "declared_pairs: 7"));
  });

  it("refreshes the committed graph, so graph --check passes and the graph has the new pair's edges", async () => {
    const root = copyExampleSuite();
    const graphFile = path.join(root, "capability-graph.json");
    const before = readFileSync(graphFile, "utf8");
    const created = await runCli(["new-pair", "--suite", root, ...NEW_PAIR]);
    expect(created.code, created.output).toBe(0);
    expect(created.stdout).toContain(`refreshed ${shown(graphFile)}`);
    const after = readFileSync(graphFile, "utf8");
    expect(after).not.toBe(before);
    expect(after).toBe((await runCli(["graph", "--suite", root])).stdout);
    const graph = JSON.parse(after) as { edges: Array<{ from: string; to: string; kind: string }> };
    expect(graph.edges.filter((e) => e.from === "MD-41" && e.to === "MD-42").map((e) => e.kind)).toEqual([
      "handoff",
      "plan_review_gate",
      "exact_twin_execution",
    ]);
    const check = await runCli(["graph", "--check", "--suite", root]);
    expect(check.code, check.output).toBe(0);
    expect(check.stdout).toContain("is up to date (18 prompts, 7 pairs)");
    const validated = await runCli(["validate", "--suite", root]);
    expect(validated.code, validated.output).toBe(0);
    expect(validated.stdout).not.toContain("GRAPH_STALE");
  });

  it("refreshes the graph named by graph_file in its own format", async () => {
    const files = baseSuite();
    files["twinlock.yaml"] = "suite_id: fixture\ngraph_file: docs/graph.dot\n";
    const root = writeSuite(files);
    const graphFile = path.join(root, "docs/graph.dot");
    mkdirSync(path.dirname(graphFile));
    expect((await runCli(["graph", "--suite", root, "--out", graphFile])).code).toBe(0);
    const created = await runCli(["new-pair", "--suite", root, ...NEW_PAIR]);
    expect(created.code, created.output).toBe(0);
    expect(created.stdout).toContain(`refreshed ${shown(graphFile)}`);
    const text = readFileSync(graphFile, "utf8");
    expect(text.startsWith("digraph")).toBe(true);
    expect(text).toContain('"MD-41" -> "MD-42" [label="exact_twin_execution", style=bold];');
    expect((await runCli(["graph", "--check", "--suite", root])).code).toBe(0);
    expect(existsSync(path.join(root, "capability-graph.json"))).toBe(false);
  });

  it("refuses an existing planner ID with exit 1, naming it and its file, and writes nothing", async () => {
    const root = copyExampleSuite();
    const run = await runCli(["new-pair", "--suite", root, ...NEW_PAIR.map((a) => (a === "MD-41" ? "MD-29" : a))]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("twinlock: MD-29 already exists in the suite (debugging/md-29-debugging-planner.md); choose unused IDs\n");
    expect(readFileSync(path.join(root, "twinlock.yaml"), "utf8")).toContain("declared_pairs: 6");
    expect(run.output).not.toMatch(STACK_FRAME);
  });

  it("refuses an existing executor ID", async () => {
    const root = copyExampleSuite();
    const run = await runCli(["new-pair", "--suite", root, ...NEW_PAIR.map((a) => (a === "MD-42" ? "MD-26" : a))]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("MD-26 already exists");
  });

  it.each([
    [["--planner", "md-41"], "is not a prompt ID"],
    [["--executor", "MD-41"], "must be different"],
    [["--requires", "MD-99"], "--requires MD-99: no such prompt"],
    [["--risk", "extreme"], '--risk "extreme" is not one of low, medium, high'],
    [["--dir", "../outside"], "leaves the suite folder"],
  ])("refuses bad usage %j with exit 2 and one line", async (change, message) => {
    const root = copyExampleSuite();
    const args = [...NEW_PAIR];
    for (let i = 0; i < change.length; i += 2) {
      const at = args.indexOf(change[i] as string);
      if (at === -1) args.push(change[i] as string, change[i + 1] as string);
      else args[at + 1] = change[i + 1] as string;
    }
    const run = await runCli(["new-pair", "--suite", root, ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  it("scaffolds into a suite without a declared count and leaves the config alone", async () => {
    const files = baseSuite();
    files["twinlock.yaml"] = "suite_id: fixture\n";
    const root = writeSuite(files);
    const run = await runCli(["new-pair", "--suite", root, ...NEW_PAIR]);
    expect(run.code).toBe(0);
    expect(readFileSync(path.join(root, "twinlock.yaml"), "utf8")).toBe("suite_id: fixture\n");
    // No committed graph: none is created, and nothing is said about one.
    expect(existsSync(path.join(root, "capability-graph.json"))).toBe(false);
    expect(run.stdout).not.toContain("refreshed");
    expect((await runCli(["validate", "--suite", root, "--expect-pairs", "3"])).code).toBe(0);
  });

  // A warning about the new pair is printed but is not a problem: exit 0, as
  // validate on the same suite.
  it("exits 0, like validate, when the new pair has only a warning, and prints that warning", async () => {
    const root = copyExampleSuite();
    const args = NEW_PAIR.map((a) => (a === "Flaky integration test executor" ? "Successor of MD-28" : a));
    const run = await runCli(["new-pair", "--suite", root, ...args]);
    expect((await runCli(["validate", "--suite", root])).code).toBe(0);
    expect(run.stdout).toMatch(/^testing\/md-41-[a-z0-9-]+\.md:\d+:\d+ BODY_ALTERNATE_EXECUTOR \(warning\) MD-41: /m);
    expect(run.stdout).toContain("validate: MD-41 resolves to exactly MD-42, bodies pass");
    expect(run.stdout).not.toContain("problems for the new pair");
    expect(run.code).toBe(0);
  });
});
