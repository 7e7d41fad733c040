import { afterAll, describe, expect, it } from "vitest";
import { BASE_FILES, baseSuite, lineOf, plannerText } from "../../test-support/prompt-builder.js";
import { runCli, runCliJson } from "../../test-support/run-cli.js";
import { EXAMPLE_SUITE, removeTempDirs, writeSuite } from "../../test-support/temp-suite.js";

afterAll(removeTempDirs);

describe("audit-bodies", () => {
  it("passes --check on the example suite", async () => {
    const run = await runCli(["audit-bodies", "--check", "--suite", EXAMPLE_SUITE]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("16 prompt bodies audited, 0 problems\n");
  });

  it("reports body problems and still exits 0 without --check", async () => {
    const text = plannerText("MD-10", "MD-11", { body: { omit: ["tool_policy"] } });
    const root = writeSuite({ ...baseSuite(), [BASE_FILES["MD-10"]]: text });
    const run = await runCli(["audit-bodies", "--suite", root]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `${BASE_FILES["MD-10"]}:${text.split("\n").indexOf("---", 1) + 2}:1 BODY_BLOCK_MISSING MD-10: body has no <tool_policy> block`,
    );
    expect(run.stdout).toContain("6 prompt bodies audited, 1 problem\n");
  });

  it("exits 1 with --check on any body problem", async () => {
    const text = plannerText("MD-10", "MD-11", { body: { blocks: { plan_review_and_execution_gate: "Ask for approval of MD-11." } } });
    const root = writeSuite({ ...baseSuite(), [BASE_FILES["MD-10"]]: text });
    const run = await runCliJson<{ ok: boolean; problems: number; diagnostics: Array<{ code: string; line: number }> }>([
      "audit-bodies",
      "--check",
      "--suite",
      root,
    ]);
    expect(run.code).toBe(1);
    expect(run.json.ok).toBe(false);
    expect(run.json.diagnostics).toEqual([
      expect.objectContaining({ code: "BODY_PHRASE_MISSING", line: lineOf(text, "<plan_review_and_execution_gate>") }),
    ]);
  });

  it("does not fail --check on a warning alone", async () => {
    const gate = "user review, requested changes, re-freeze, execution consent, exact execution twin MD-11; never MD-13.";
    const root = writeSuite({
      ...baseSuite(),
      [BASE_FILES["MD-10"]]: plannerText("MD-10", "MD-11", { body: { blocks: { plan_review_and_execution_gate: gate } } }),
    });
    const run = await runCli(["audit-bodies", "--check", "--suite", root]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("BODY_ALTERNATE_EXECUTOR (warning)");
  });

  it("counts an unparsable file as a problem under --check", async () => {
    const root = writeSuite({ ...baseSuite(), "bad.md": "---\nprompt_id: MD-40\ntitle: a: b\n---\n" });
    const run = await runCli(["audit-bodies", "--check", "--suite", root]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("bad.md:3:8 FRONTMATTER_YAML");
  });
});
