import { existsSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { ADMISSION_STOP } from "../../run/admission-checks.js";
import { type CliRun, runCli, STACK_FRAME } from "../../test-support/run-cli.js";
import { makeStyle } from "../style.js";
import { failedChecksOnly } from "./demo.js";

let demo: CliRun;
let cwdBefore: string;
let cwdAfter: string;

beforeAll(async () => {
  cwdBefore = process.cwd();
  demo = await runCli(["demo"]);
  cwdAfter = process.cwd();
});

/** The demo's text from the line starting with `$ twinlock <command>` up to the next such line. */
function step(command: string): string {
  const start = demo.stdout.indexOf(`$ twinlock ${command}`);
  expect(start, `step "$ twinlock ${command}" is shown`).toBeGreaterThanOrEqual(0);
  const next = demo.stdout.indexOf("\n$ twinlock ", start + 1);
  return demo.stdout.slice(start, next === -1 ? undefined : next);
}

describe("twinlock demo", () => {
  it("runs the whole gate in-process, exits 0 and prints no stack trace or internal error", () => {
    expect(demo.code).toBe(0);
    expect(demo.stderr).toBe("");
    expect(demo.output).not.toMatch(STACK_FRAME);
    expect(demo.output).not.toContain("internal error");
  });

  it("returns to the folder it started in", () => {
    expect(cwdAfter).toBe(cwdBefore);
  });

  it("validates the example suite and shows MD-29's one exact twin", () => {
    expect(step("validate")).toContain("pairs      6 genuine (declared 6)");
    expect(step("pair-status MD-29 --suite")).toContain("MD-29 → MD-30 (Debugging fix executor); exact twin only");
  });

  it("freezes revision 1, asks for changes, and re-freezes revision 2 showing what changed", () => {
    expect(demo.stdout).toMatch(/froze MD-29 revision 1: sha256:[0-9a-f]{64}/);
    expect(demo.stdout).toContain("recorded review of MD-29 revision 1: changes_requested by ");
    expect(demo.stdout).toMatch(/froze MD-29 revision 2: sha256:[0-9a-f]{64}/);
    const present = step("present run.json MD-29");
    expect(present).toContain("## What changed since revision 1");
    expect(present).toContain("**added** `@EVIDENCE:E3`");
    expect(present).toContain("**added** `=VERIFY:V3`");
  });

  it("refuses the 'looks fine' approval of revision 1 once revision 2 is the plan", () => {
    expect(demo.stdout).toMatch(/is revision 1, not the current revision 2/);
  });

  it("asks the consent question naming MD-30 and its title, and authorizes only MD-30", () => {
    expect(demo.stdout).toContain("May MD-30 (Debugging fix executor) now act on the approved frozen plan of MD-29, revision 2");
    expect(demo.stdout).toContain("authorized_execution_prompt_ids: MD-30\n");
  });

  it("stops admission without consent, for the alternate executor MD-28, and for a plan file changed after approval", () => {
    expect(demo.stdout.split(ADMISSION_STOP).length - 1).toBeGreaterThanOrEqual(4);
    expect(step("admit run.json MD-30\n")).toContain(ADMISSION_STOP);
    const alternate = step("admit run.json MD-28");
    expect(alternate).toContain(ADMISSION_STOP);
    expect(alternate).toContain("Requested: MD-28; Required exact twin: MD-30");
    expect(alternate).toContain("Result: rejected");
    expect(alternate).toContain("(exit 3)");
    const changed = step("admit run.json MD-30 --dry");
    expect(changed).toContain("changed action_plan.json");
    expect(changed).toContain("(exit 3)");
  });

  it("admits MD-30 once and refuses the second admission on the used consent", () => {
    expect(demo.stdout).toContain("admitted MD-30 for MD-29: state executing; the consent is used up");
    expect(demo.stdout).toMatch(/the consent was already used by an admission at /);
  });

  it("refuses verified without the change (exit 2), then closes verified on the change that conforms to the plan", () => {
    const refused = step("close run.json MD-29 --result verified --actor alice");
    expect(refused).toContain("closing as verified needs the executed change");
    expect(refused).toContain("(exit 2)");
    const closed = step("close run.json MD-29 --result verified --changed-files changed.txt");
    expect(closed).toContain("MD-29: closed (verified)");
    expect(closed).toContain("executed: 2 files changed, 3 criterion results recorded");
    expect(closed).toContain("conforms: every action done, every file inside the plan, every criterion passed with evidence");
  });

  it("ends with the event log and a verified chain", () => {
    expect(step("log run.json")).toMatch(/chain ok: \d+ events, head sha256:[0-9a-f]{64}/);
    expect(step("verify-log run.json")).toMatch(/ok: \d+ events, chain intact, state equals the replay/);
  });

  it("prints next steps a person can run as shown: each freeze, review and consent on this signing suite names --key", () => {
    const nexts = demo.stdout.split("\n").filter((l) => l.startsWith("next: "));
    expect(nexts).toContain("next: twinlock freeze-pair-handoff run.json MD-29 --handoff DIR --key FILE");
    expect(nexts).toContain("next: revise the handoff, then: twinlock freeze-pair-handoff run.json MD-29 --key FILE");
    for (const line of nexts.filter((l) => /twinlock (freeze-pair-handoff|review-pair-plan|consent-pair-execution|resolve-stop) /.test(l)))
      expect(line).toContain("--key FILE");
  });

  it("removes its temporary folder", () => {
    const dir = /working in (\/\S+?)[;,]/.exec(demo.stdout)?.[1];
    expect(dir).toBeTruthy();
    expect(existsSync(dir as string)).toBe(false);
  });

  it("lists every step with its exit code under --json", async () => {
    const r = await runCli(["demo", "--json"]);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { ok: boolean; steps: Array<{ command: string; exit: number }> };
    expect(json.ok).toBe(true);
    const exits = (prefix: string) => json.steps.filter((s) => s.command.startsWith(`twinlock ${prefix}`)).map((s) => s.exit);
    expect(exits("admit run.json MD-28")).toEqual([3]);
    const exact = exits("admit run.json MD-30");
    expect(exact.filter((code) => code === 0)).toHaveLength(1);
    expect(exact.filter((code) => code !== 0).every((code) => code === 3)).toBe(true);
    expect(exact.at(-1)).toBe(3);
    expect(exits("verify-log")).toEqual([0]);
  });
});

describe("the demo's admission output", () => {
  const table = [
    "!STOP:invalid-reviewed-handoff-or-exact-twin-consent",
    "FAIL  1     planner is the executor's reciprocal paired_prompt_id",
    "            Requested: MD-28; Required exact twin: MD-30",
    "pass  2     the approved review's hash equals the current frozen hash",
    "            approved sha256:…",
    "pass  T5    separate duties",
    "            frozen by planner-agent",
    "refused: 1 check(s) failed; nothing was recorded",
  ].join("\n");

  it("keeps each failed check with its detail and folds the passing ones into one line after them", () => {
    expect(failedChecksOnly(table, makeStyle(false)).split("\n")).toEqual([
      "!STOP:invalid-reviewed-handoff-or-exact-twin-consent",
      "FAIL  1     planner is the executor's reciprocal paired_prompt_id",
      "            Requested: MD-28; Required exact twin: MD-30",
      "pass  2 other checks (folded by the demo; `twinlock admit` prints each)",
      "refused: 1 check(s) failed; nothing was recorded",
    ]);
  });

  it("says all checks pass when none failed", () => {
    const admitted = "pass  1     x\n            d\npass  2     y\n            e\nadmitted MD-30 for MD-29";
    expect(failedChecksOnly(admitted, makeStyle(false))).toBe(
      "pass  all 2 checks (folded by the demo; `twinlock admit` prints each)\nadmitted MD-30 for MD-29",
    );
  });
});
