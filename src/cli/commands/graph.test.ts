import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { baseSuite, lineOf } from "../../test-support/prompt-builder.js";
import { runCli, runCliJson, STACK_FRAME } from "../../test-support/run-cli.js";
import { copyExampleSuite, EXAMPLE_SUITE, makeTempDir, removeTempDirs, writeSuite } from "../../test-support/temp-suite.js";

afterAll(removeTempDirs);

const retitle = (root: string) => {
  const file = path.join(root, "debugging/md-30-debugging-executor.md");
  const text = readFileSync(file, "utf8");
  writeFileSync(file, text.replace("title: Debugging fix executor\n", "title: Debugging fix executor (renamed)\n"));
};

describe("graph", () => {
  it("prints the same bytes twice for the example suite", async () => {
    const a = await runCli(["graph", "--suite", EXAMPLE_SUITE]);
    const b = await runCli(["graph", "--suite", EXAMPLE_SUITE]);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(JSON.parse(a.stdout)).toMatchObject({ format: "twinlock-graph/1", suite_id: "example-engineering" });
  });

  it("prints exactly the committed capability-graph.json of the example suite", async () => {
    const run = await runCli(["graph", "--suite", EXAMPLE_SUITE]);
    expect(run.stdout).toBe(readFileSync(path.join(EXAMPLE_SUITE, "capability-graph.json"), "utf8"));
  });

  it("has the three pair edges for MD-29 → MD-30 and none from MD-29 to MD-26 or MD-28", async () => {
    const graph = JSON.parse((await runCli(["graph", "--suite", EXAMPLE_SUITE])).stdout) as {
      edges: Array<{ from: string; to: string; kind: string }>;
    };
    expect(graph.edges.filter((e) => e.from === "MD-29" && e.to === "MD-30").map((e) => e.kind)).toEqual([
      "handoff",
      "plan_review_gate",
      "exact_twin_execution",
    ]);
    expect(graph.edges.filter((e) => e.from === "MD-29" && ["MD-26", "MD-28"].includes(e.to))).toEqual([]);
  });

  it("prints DOT and Mermaid with --format", async () => {
    const dot = await runCli(["graph", "--suite", EXAMPLE_SUITE, "--format", "dot"]);
    expect(dot.code).toBe(0);
    expect(dot.stdout.startsWith('digraph "example-engineering" {\n')).toBe(true);
    expect(dot.stdout).toContain('"MD-29" -> "MD-30" [label="exact_twin_execution", style=bold];');
    const mermaid = await runCli(["graph", "--suite", EXAMPLE_SUITE, "--format", "mermaid"]);
    expect(mermaid.stdout.startsWith("flowchart LR\n")).toBe(true);
    expect(mermaid.stdout).toContain("MD_29 ==>|exact_twin_execution| MD_30");
  });

  it("refuses an unknown --format with exit 2, listing the formats", async () => {
    const run = await runCli(["graph", "--suite", EXAMPLE_SUITE, "--format", "svg"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("json, dot, mermaid");
    expect(run.output).not.toMatch(STACK_FRAME);
  });

  it("writes --out and takes the format from its extension", async () => {
    const out = path.join(makeTempDir(), "graph.dot");
    const run = await runCli(["graph", "--suite", EXAMPLE_SUITE, "--out", out]);
    expect(run.code).toBe(0);
    expect(readFileSync(out, "utf8").startsWith("digraph")).toBe(true);
    expect((await runCli(["graph", "--suite", EXAMPLE_SUITE, "--out", out, "--check"])).code).toBe(0);
  });

  it("builds the same graph for the same prompts written in a different order", async () => {
    const entries = Object.entries(baseSuite());
    const a = writeSuite(Object.fromEntries(entries));
    const b = writeSuite(Object.fromEntries([...entries].reverse()));
    const ga = (await runCli(["graph", "--suite", a, "--format", "dot"])).stdout;
    const gb = (await runCli(["graph", "--suite", b, "--format", "dot"])).stdout;
    expect(gb).toBe(ga);
  });
});

describe("graph --check", () => {
  it("passes on the example suite", async () => {
    const run = await runCli(["graph", "--check", "--suite", EXAMPLE_SUITE]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("is up to date (16 prompts, 6 pairs)");
  });

  it("fails after an edit with exit 1, printing a GRAPH_STALE problem line at the first differing line, then the difference", async () => {
    const root = copyExampleSuite();
    const committed = readFileSync(path.join(root, "capability-graph.json"), "utf8");
    retitle(root);
    const run = await runCli(["graph", "--check", "--suite", root]);
    expect(run.code).toBe(1);
    const lines = run.stdout.split("\n");
    const line = lineOf(committed, '      "title": "Debugging fix executor",');
    expect(lines[0]).toBe(
      `capability-graph.json:${line}:1 GRAPH_STALE the committed capability graph differs from the one rebuilt from the prompts; ` +
        `refresh it with: twinlock graph --suite ${root} --out ${path.join(root, "capability-graph.json")}`,
    );
    expect(lines[1]).toBe("(- committed, + rebuilt)");
    expect(lines).toContain('-       "title": "Debugging fix executor",');
    expect(lines).toContain('+       "title": "Debugging fix executor (renamed)",');
    expect(lines.indexOf('-       "title": "Debugging fix executor",')).toBeGreaterThan(1);
    expect(run.stderr).toBe("");
    expect(run.output).not.toMatch(STACK_FRAME);
  });

  it("passes again once the graph is refreshed with the printed command", async () => {
    const root = copyExampleSuite();
    retitle(root);
    expect((await runCli(["graph", "--suite", root, "--out", path.join(root, "capability-graph.json")])).code).toBe(0);
    expect((await runCli(["graph", "--check", "--suite", root])).code).toBe(0);
  });

  it("fails when a pair breaks, since its pair edges disappear", async () => {
    const root = copyExampleSuite();
    const file = path.join(root, "debugging/md-29-debugging-planner.md");
    writeFileSync(file, readFileSync(file, "utf8").replace("exact_twin_only: true", "exact_twin_only: false"));
    const run = await runCli(["graph", "--check", "--suite", root]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('"kind": "exact_twin_execution"');
  });

  it("reports the stale state as JSON with the file, the difference and the GRAPH_STALE diagnostic", async () => {
    const root = copyExampleSuite();
    const committed = readFileSync(path.join(root, "capability-graph.json"), "utf8");
    retitle(root);
    const run = await runCliJson<{ ok: boolean; stale: boolean; file: string; missing: boolean; diff: string[]; diagnostics: unknown[] }>([
      "graph",
      "--check",
      "--suite",
      root,
    ]);
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({ ok: false, stale: true, file: path.join(root, "capability-graph.json"), missing: false });
    expect(run.json.diff.length).toBeGreaterThan(1);
    expect(run.json.diff).toContain('+       "title": "Debugging fix executor (renamed)",');
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
  });

  it("fails with exit 1 and a GRAPH_STALE line at 1:1 with the command to create it when the graph file is missing", async () => {
    const root = copyExampleSuite();
    rmSync(path.join(root, "capability-graph.json"));
    const run = await runCli(["graph", "--check", "--suite", root]);
    expect(run.code).toBe(1);
    expect(run.stdout.split("\n")[0]).toBe(
      `capability-graph.json:1:1 GRAPH_STALE the graph file does not exist; refresh it with: twinlock graph --suite ${root} --out ${path.join(root, "capability-graph.json")}`,
    );
    expect(run.stdout).not.toContain("(- committed, + rebuilt)");
    expect(run.output).not.toMatch(STACK_FRAME);
  });

  it("reports a missing graph file as JSON with missing: true and no difference", async () => {
    const root = copyExampleSuite();
    rmSync(path.join(root, "capability-graph.json"));
    const run = await runCliJson<{ diagnostics: Array<{ code: string; file: string; line: number; col: number }> }>([
      "graph",
      "--check",
      "--suite",
      root,
    ]);
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({ ok: false, stale: true, missing: true, diff: [], file: path.join(root, "capability-graph.json") });
    expect(run.json.diagnostics.map((d) => [d.code, d.file, d.line, d.col])).toEqual([["GRAPH_STALE", "capability-graph.json", 1, 1]]);
  });

  it("names a stale --out file outside the suite by its absolute path", async () => {
    const out = path.join(makeTempDir(), "graph.dot");
    expect((await runCli(["graph", "--suite", EXAMPLE_SUITE, "--out", out])).code).toBe(0);
    const text = readFileSync(out, "utf8");
    writeFileSync(out, text.replace("rankdir=LR;", "rankdir=TB;"));
    const run = await runCli(["graph", "--check", "--suite", EXAMPLE_SUITE, "--out", out]);
    expect(run.code).toBe(1);
    const prefix = `${out}:${lineOf(text, "  rankdir=")}:1 GRAPH_STALE `;
    expect(run.stdout.slice(0, prefix.length)).toBe(prefix);
  });
});
