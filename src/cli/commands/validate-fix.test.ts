import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BODY_RULES } from "../../checks/body-rules.js";
import { planSuiteFix } from "../../checks/plan-suite-fix.js";
import { validateSuite } from "../../checks/validate-suite.js";
import { ConflictError } from "../../errors/errors.js";
import { FILL_IN_MARK } from "../../suite/fill-in-placeholder.js";
import { loadSuite } from "../../suite/load-suite.js";
import { renderInsertionDiff } from "../../suite/render-insertion-diff.js";
import { DIST_BIN, ensureBuilt } from "../../test-support/ensure-built.js";
import { runCli } from "../../test-support/run-cli.js";
import { copyExampleSuite, makeTempDir, removeTempDirs, writeSuite } from "../../test-support/temp-suite.js";
import { EXECUTOR_CANONICAL, PLANNER_CANONICAL } from "../../twin/canonical-metadata.js";
import { runValidateFix, writeSuiteFix } from "./validate-fix.js";

afterAll(removeTempDirs);

const PAIR_BLOCKS = [...DEFAULT_BODY_RULES.allBlocks, ...DEFAULT_BODY_RULES.plannerBlocks, ...DEFAULT_BODY_RULES.executorBlocks];
const PAIR_KEYS = new Set([...Object.keys(PLANNER_CANONICAL), ...Object.keys(EXECUTOR_CANONICAL)]);

/**
 * Strip every pair member of the example suite of its pair metadata and its
 * required body blocks, as a suite adopting twinlock has them: each planner
 * keeps only the link it declares (`prompt_role` and `paired_prompt_id`);
 * each executor keeps neither, and its `requires` loses its planner (the
 * rest of that list, `MD-01`, is the author's own and stays).
 */
function stripPairs(root: string): string[] {
  const stripped: string[] = [];
  for (const p of loadSuite(root).prompts) {
    if (p.pairedPromptId === null) continue;
    const keep = p.role === "investigative" ? new Set(["prompt_role", "paired_prompt_id"]) : new Set<string>();
    const file = path.join(root, p.file);
    const [, yaml, body] = readFileSync(file, "utf8").split(/^---\n/m) as [string, string, string];
    const lines = yaml
      .split("\n")
      .filter((line) => {
        const key = line.slice(0, line.indexOf(":"));
        return !PAIR_KEYS.has(key) || keep.has(key);
      })
      .map((line) => (p.role === "executive" && line.startsWith("requires:") ? line.replace(`${p.pairedPromptId}, `, "") : line));
    let rest = body;
    for (const tag of PAIR_BLOCKS) rest = rest.replace(new RegExp(`\\n?<${tag}>[\\s\\S]*?</${tag}>\\n?`), "\n");
    writeFileSync(file, `---\n${lines.join("\n")}---\n${rest}`);
    stripped.push(p.file);
  }
  return stripped;
}

/** Every prompt file's bytes under `root`, by path. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(child);
      else out.set(child, readFileSync(path.join(root, child), "latin1"));
    }
  };
  walk("");
  return out;
}

/** Apply a unified diff of one file to `before`, as `patch` would, checking every context and removed line. */
function applyDiff(before: string, diff: string): string {
  const old = before === "" ? [] : before.split("\n");
  if (before.endsWith("\n")) old.pop();
  const out: string[] = [];
  let at = 0;
  let newEndsWithoutLineEnd = false;
  const lines = diff.split("\n").slice(2);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const hunk = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(line);
    if (hunk) {
      const start = Number(hunk[2]) === 0 ? Number(hunk[1]) : Number(hunk[1]) - 1;
      while (at < start) out.push(old[at++] as string);
      continue;
    }
    const marker = lines[i + 1] === "\\ No newline at end of file";
    if (line.startsWith(" ") || line.startsWith("-")) expect(old[at++]).toBe(line.slice(1));
    if (line.startsWith(" ") || line.startsWith("+")) {
      out.push(line.slice(1));
      newEndsWithoutLineEnd = marker;
    }
    if (marker) i++;
  }
  while (at < old.length) out.push(old[at++] as string);
  if (at === old.length && !before.endsWith("\n") && before !== "" && out.length > 0 && !diff.includes("\\ No newline"))
    newEndsWithoutLineEnd = true;
  return out.join("\n") + (newEndsWithoutLineEnd || out.length === 0 ? "" : "\n");
}

describe("validate --fix on the example suite with every pair stripped", () => {
  let root: string;
  let stripped: string[];
  beforeAll(() => {
    root = copyExampleSuite();
    stripped = stripPairs(root);
  });

  it("strips the suite so validate reports every pair's metadata and blocks missing", () => {
    const report = validateSuite(loadSuite(root));
    expect(stripped).toHaveLength(12);
    expect(report.genuinePairs).toBe(0);
    // An executor with no role and no twin is no pair member yet: only the blocks of every prompt are asked of it.
    expect(report.diagnostics.filter((d) => d.code === "BODY_BLOCK_MISSING")).toHaveLength(6 * 5 + 6 * 3);
  });

  it("without --write shows a unified diff and changes no byte", async () => {
    const before = snapshot(root);
    const result = await runValidateFix({ suite: root });
    expect(result.exitCode).toBe(0);
    expect(result.text).toContain("--- a/debugging/md-30-debugging-executor.md\n+++ b/debugging/md-30-debugging-executor.md\n@@ ");
    expect(result.text).toContain("+paired_prompt_id: MD-29\n");
    expect(result.text).toContain("+accepted_planning_prompt_id: MD-29\n");
    expect(result.text).toContain("nothing written; apply with: twinlock validate --fix --write");
    expect(snapshot(root)).toEqual(before);
    // Each file's diff, applied as patch applies it, gives exactly what --write writes.
    for (const f of planSuiteFix(loadSuite(root)).files) {
      const diff = result.text.slice(result.text.indexOf(`--- a/${f.file}\n`)).split(/\n(?=--- a\/|\nfix )/)[0] as string;
      expect(applyDiff(f.before, diff)).toBe(f.after);
    }
  });

  it("with --write makes validate report only the placeholders it wrote and the requires entries it left, as it said", async () => {
    const result = await runValidateFix({ suite: root, write: true });
    const report = validateSuite(loadSuite(root));
    // What is each prompt's own policy (what it may touch, which tools) is left marked for a person, and reported;
    // an executor's own `requires` line is not --fix's to edit, so its planner is left for the person to add.
    const executors = stripped.filter((f) => f.includes("executor"));
    const expected = [
      ...stripped.flatMap((file) => ["authorization_boundary", "tool_policy"].map((field) => `BODY_PLACEHOLDER ${file} ${field}`)),
      ...executors.map((file) => `PAIR_EXECUTOR_REQUIRES ${file} requires`),
      // No pair resolves, and the graph's edges differ, until those entries are back.
      "GRAPH_STALE capability-graph.json undefined",
      "PAIR_COUNT twinlock.yaml undefined",
    ];
    expect(report.diagnostics.map((d) => `${d.code} ${d.file} ${d.field}`).sort()).toEqual(expected.sort());
    expect(result.exitCode).toBe(1);
    expect(result.text).toContain(`placeholders 24 blocks hold ${FILL_IN_MARK}`);
    // The suite's lock is gone with the write.
    expect(existsSync(path.join(root, "twinlock.yaml.lock"))).toBe(false);
    expect(result.text).toContain("debugging/md-30-debugging-executor.md: MD-30: `requires` lacks its planner MD-29; add it to the list");
    // Writing those two things is all that is left: then validate is clean.
    for (const file of stripped) {
      const abs = path.join(root, file);
      const id = loadSuite(root).prompts.find((p) => p.file === file)?.pairedPromptId;
      const text = readFileSync(abs, "utf8").replaceAll(`${FILL_IN_MARK}:`, "Only");
      writeFileSync(abs, file.includes("executor") ? text.replace("requires: [", `requires: [${id}, `) : text);
    }
    const clean = validateSuite(loadSuite(root));
    expect(clean.diagnostics).toEqual([]);
    expect(clean.genuinePairs).toBe(6);
  });

  it("run again on the fixed suite, plans nothing", () => {
    expect(planSuiteFix(loadSuite(root)).files).toEqual([]);
  });
});

const PLANNER = "---\nprompt_id: AB-1\nprompt_role: investigative\npairing_required: true\npaired_prompt_id: AB-2\n---\n# Plan\n";
const EXECUTOR = "---\nprompt_id: AB-2\nprompt_role: executive\npairing_required: true\npaired_prompt_id: AB-1\n---\n# Act\n";

describe("validate --fix on two plain prompts made a pair", () => {
  it("adds the 9 metadata problems' keys and the 11 blocks, and the pair resolves", async () => {
    const root = writeSuite({ "ab-1.md": PLANNER, "ab-2.md": EXECUTOR });
    const before = validateSuite(loadSuite(root)).diagnostics;
    expect(before.filter((d) => d.code.startsWith("PAIR_"))).toHaveLength(9);
    expect(before.filter((d) => d.code === "BODY_BLOCK_MISSING")).toHaveLength(11);
    const fix = planSuiteFix(loadSuite(root));
    expect(fix.files.map((f) => f.keys)).toEqual([
      ["plan_review_required", "execution_consent_required", "exact_twin_only", "review_cycle"],
      ["accepted_planning_prompt_id", "reviewed_handoff_required", "execution_consent_required", "exact_twin_only", "requires"],
    ]);
    await writeSuiteFix(root, fix);
    const after = validateSuite(loadSuite(root));
    expect(after.genuinePairs).toBe(1);
    expect(new Set(after.diagnostics.map((d) => d.code))).toEqual(new Set(["BODY_PLACEHOLDER"]));
  });

  it("leaves a key it does not own with another value, and an executor's own requires list, and says so", () => {
    const root = writeSuite({
      "ab-1.md": PLANNER.replace("---\n#", "exact_twin_only: false\n---\n#"),
      "ab-2.md": EXECUTOR.replace("---\n#", "requires: [AB-9]\n---\n#"),
      "ab-9.md": "---\nprompt_id: AB-9\n---\n",
    });
    const fix = planSuiteFix(loadSuite(root));
    expect(fix.left.map((l) => `${l.promptId}: ${l.message}`)).toEqual([
      "AB-1: `exact_twin_only` is false, not true; left as you wrote it",
      "AB-2: `requires` lacks its planner AB-1; add it to the list (your line, left as it is)",
    ]);
    expect(fix.files.find((f) => f.file === "ab-1.md")?.after).toContain("exact_twin_only: false\n");
    expect(fix.files.find((f) => f.file === "ab-1.md")?.keys).not.toContain("exact_twin_only");
  });

  it("keeps CRLF line ends and a last line without a line end as they are", () => {
    const crlf = PLANNER.replaceAll("\n", "\r\n").replace(/\r\n$/, "");
    const root = writeSuite({ "ab-1.md": crlf, "ab-2.md": EXECUTOR });
    const planner = planSuiteFix(loadSuite(root)).files.find((f) => f.file === "ab-1.md");
    expect(planner?.after.startsWith(crlf.slice(0, crlf.indexOf("---", 3)))).toBe(true);
    expect(planner?.after.replaceAll("\r\n", "")).not.toContain("\n");
    expect(planner?.after).toContain("# Plan\r\n");
    if (planner) expect(applyDiff(planner.before, renderInsertionDiff(planner.file, planner.before, planner.after))).toBe(planner.after);
  });

  it("refuses, writing nothing, when a file changed between the diff and the write", async () => {
    const root = writeSuite({ "ab-1.md": PLANNER, "ab-2.md": EXECUTOR });
    const fix = planSuiteFix(loadSuite(root));
    writeFileSync(path.join(root, "ab-2.md"), `${EXECUTOR}A line the person added after seeing the diff.\n`);
    const before = snapshot(root);
    await expect(writeSuiteFix(root, fix)).rejects.toThrow(ConflictError);
    await expect(writeSuiteFix(root, fix)).rejects.toThrow(/ab-2\.md changed since the fix was planned; nothing written/);
    expect(snapshot(root)).toEqual(before);
  });
});

/** Lines a person may have in their frontmatter (extra keys) and body (any text, none opening a block --fix adds). */
const extraKey = fc
  .tuple(fc.stringMatching(/^x_[a-z]{1,8}$/), fc.oneof(fc.stringMatching(/^[A-Za-z ]{0,20}$/), fc.integer().map(String)))
  .map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
const extraBody = fc.array(fc.string({ unit: fc.constantFrom("a", "Z", " ", "<", ">", "/", "-", "#", "`", "é", "\t", "1", ":", "_") }), {
  maxLength: 6,
});

describe("validate --fix keeps what a person wrote", () => {
  it("keeps every existing byte, in order, and adds only lines (property over random extra keys and text)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(extraKey, { maxLength: 4, selector: (l) => l.split(":")[0] }),
        extraBody,
        extraBody,
        async (keys, top, tail) => {
          const planner =
            PLANNER.replace("---\n#", `${keys.join("\n")}${keys.length ? "\n" : ""}---\n${top.join("\n")}\n#`) + tail.join("\n");
          const root = writeSuite({ "ab-1.md": planner, "ab-2.md": EXECUTOR }, makeTempDir());
          const fix = planSuiteFix(loadSuite(root));
          const mine = fix.files.find((f) => f.file === "ab-1.md");
          if (!mine) return fix.left.some((l) => l.file === "ab-1.md");
          // The old text is the new text with whole lines taken out: no byte of an old line changed or moved out of order.
          const oldLines = planner.split("\n");
          const newLines = mine.after.split("\n");
          let i = 0;
          for (const line of newLines) if (i < oldLines.length && line === oldLines[i]) i++;
          expect(i).toBe(oldLines.length);
          expect(newLines.length).toBeGreaterThan(oldLines.length);
          expect(applyDiff(mine.before, renderInsertionDiff(mine.file, mine.before, mine.after))).toBe(mine.after);
          const reread = loadSuite(root);
          await writeSuiteFix(root, fix);
          const after = loadSuite(root).byId.get("AB-1");
          for (const [k, v] of Object.entries(reread.byId.get("AB-1")?.frontmatter ?? {})) expect(after?.frontmatter[k]).toEqual(v);
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe("validate --fix at the command line", () => {
  it("--write without --fix is a usage error, and --fix alone exits 0 and writes nothing", async () => {
    const root = writeSuite({ "ab-1.md": PLANNER, "ab-2.md": EXECUTOR });
    const usage = await runCli(["validate", "--suite", root, "--write"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--write applies a fix: use it with --fix");
    const dry = await runCli(["validate", "--suite", root, "--fix"]);
    expect(dry.code).toBe(0);
    expect(readFileSync(path.join(root, "ab-1.md"), "utf8")).toBe(PLANNER);
  });

  describe("the installed command", () => {
    beforeAll(ensureBuilt, 300_000);
    it("exits 1 after writing while placeholders remain, and 0 once validate is clean", () => {
      const root = writeSuite({ "ab-1.md": PLANNER, "ab-2.md": EXECUTOR });
      const env = { ...process.env, TWINLOCK_HOME: makeTempDir("twinlock-home-"), NO_COLOR: "1" };
      const write = spawnSync(process.execPath, [DIST_BIN, "validate", "--suite", root, "--fix", "--write"], { encoding: "utf8", env });
      expect(write.status).toBe(1);
      expect(write.stdout).toContain("fix        2 files: 9 metadata keys, 11 body blocks written");
      for (const f of ["ab-1.md", "ab-2.md"]) {
        const abs = path.join(root, f);
        writeFileSync(abs, readFileSync(abs, "utf8").replaceAll(`${FILL_IN_MARK}:`, "Only"));
      }
      const again = spawnSync(process.execPath, [DIST_BIN, "validate", "--suite", root], { encoding: "utf8", env });
      expect(again.status).toBe(0);
    });
  });
});
