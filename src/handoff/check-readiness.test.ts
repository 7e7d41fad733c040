import { linkSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { demoHandoffRecords, writeDemoHandoff } from "../demo/demo-handoff.js";
import { UsageError } from "../errors/errors.js";
import { databaseMigrationHandoff, writeMdHandoff } from "../test-support/mission-directives-handoff.js";
import { runCli, STACK_FRAME } from "../test-support/run-cli.js";
import { makeRunTempDir, removeGateRuns, snapshotTree } from "../test-support/run-fixture.js";
import { checkReadiness, type ReadinessProblem, stripMarker } from "./check-readiness.js";
import type { HandoffRecords } from "./handoff-records.js";

afterAll(removeGateRuns);

/** A handoff folder holding the demo records after `change`. */
function handoff(change: (r: HandoffRecords) => void = () => {}): string {
  const records = demoHandoffRecords();
  change(records);
  const dir = makeRunTempDir("twinlock-ready-");
  writeDemoHandoff(dir, records);
  return dir;
}

const problemsOf = (dir: string): ReadinessProblem[] => checkReadiness(dir).problems;

describe("a ready handoff", () => {
  it("is the demo handoff: ready, with its counts and parsed records", () => {
    const r = checkReadiness(handoff());
    expect(r.ready).toBe(true);
    expect(r.problems).toEqual([]);
    expect(r.counts).toEqual({ evidence: 2, findings: 2, unknowns: 1, actions: 2, criteria: 2, files: 5 });
    expect(r.model.actions.map((a) => a.id)).toEqual(["A1", "A2"]);
  });

  it("lists open ?UNKNOWN records with their owner but is not blocked by them", () => {
    const r = checkReadiness(
      handoff((x) => {
        x.findings.unknowns.push({ id: "U2", question: "Is the cache shared across pods?", status: "open" });
        x.findings.unknowns.push({ id: "U3", question: "Old question", status: "resolved" });
        x.findings.unknowns.push({ id: "U4", question: "Later question", status: "deferred" });
      }),
    );
    expect(r.ready).toBe(true);
    expect(r.openUnknowns).toEqual([
      { id: "U1", question: "Does the nightly batch repricer hit the same path?", owner: "payments team" },
      { id: "U2", question: "Is the cache shared across pods?" },
    ]);
  });

  it("accepts citations written bare or as their marker", () => {
    const r = checkReadiness(
      handoff((x) => {
        const [f1] = x.findings.findings;
        if (f1) f1.evidence = ["E1", "@EVIDENCE:E2"];
      }),
    );
    expect(r.ready).toBe(true);
  });

  it("is ready again once a !STOP is marked resolved", () => {
    const r = checkReadiness(handoff((x) => x.actions.stops.push({ reason: "missing-backup", resolved: true, notes: "snapshot taken" })));
    expect(r.ready).toBe(true);
    expect(r.unresolvedStops).toEqual([]);
  });
});

describe("every problem kind, with its file and record ID", () => {
  for (const name of ["evidence_index.json", "finding_register.json", "action_plan.json", "acceptance_criteria.json"]) {
    it(`reports a missing ${name}`, () => {
      const dir = handoff();
      rmSync(path.join(dir, name));
      expect(problemsOf(dir)).toEqual([{ file: name, message: `missing: a handoff needs ${name}` }]);
    });
  }

  it("reports invalid JSON in a record file, and does not report citations into it as dangling", () => {
    const dir = handoff();
    writeFileSync(path.join(dir, "evidence_index.json"), '{"evidence": [');
    const problems = problemsOf(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: "evidence_index.json" });
    expect(problems[0]?.message).toMatch(/^not valid JSON: /);
  });

  it("reports a NUL byte in a record file as invalid JSON", () => {
    const dir = handoff();
    writeFileSync(path.join(dir, "acceptance_criteria.json"), '{"criteria": []}\u0000');
    expect(problemsOf(dir)).toEqual([
      expect.objectContaining({ file: "acceptance_criteria.json", message: "not valid JSON: contains a NUL byte" }),
    ]);
  });

  it("reports a schema error with the record it is in", () => {
    const dir = handoff((x) => {
      (x.actions.actions[1] as { risk: string }).risk = "extreme";
    });
    const problems = problemsOf(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: "action_plan.json", record: "A2" });
    expect(problems[0]?.message).toMatch(/^actions\.1\.risk: /);
  });

  it("reports a schema error at the top level of a record file", () => {
    const dir = handoff();
    writeFileSync(path.join(dir, "finding_register.json"), "[]");
    expect(problemsOf(dir)).toEqual([
      expect.objectContaining({ file: "finding_register.json", message: expect.stringMatching(/^\(top level\): /) }),
    ]);
  });

  it("reports a record ID that is not of the allowed form, quoting it", () => {
    const dir = handoff((x) => {
      const [e1] = x.evidence.evidence;
      if (e1) e1.id = "E 1";
    });
    expect(problemsOf(dir)).toEqual([
      { file: "evidence_index.json", record: "E 1", message: "evidence.0.id: an ID such as E1 (letters, digits, . _ -)" },
    ]);
  });

  it("reports a duplicate ID of each kind", () => {
    const dir = handoff((x) => {
      x.evidence.evidence.push({ ...(x.evidence.evidence[0] as HandoffRecords["evidence"]["evidence"][number]) });
      x.findings.findings.push({ ...(x.findings.findings[0] as HandoffRecords["findings"]["findings"][number]) });
      x.findings.unknowns.push({ ...(x.findings.unknowns[0] as HandoffRecords["findings"]["unknowns"][number]) });
      x.actions.actions.push({ ...(x.actions.actions[0] as HandoffRecords["actions"]["actions"][number]) });
      x.criteria.criteria.push({ ...(x.criteria.criteria[0] as HandoffRecords["criteria"]["criteria"][number]) });
    });
    expect(problemsOf(dir)).toEqual([
      { file: "evidence_index.json", record: "E1", message: "duplicate evidence ID E1; IDs must be unique" },
      { file: "finding_register.json", record: "F1", message: "duplicate finding ID F1; IDs must be unique" },
      { file: "finding_register.json", record: "U1", message: "duplicate unknown ID U1; IDs must be unique" },
      { file: "action_plan.json", record: "A1", message: "duplicate action ID A1; IDs must be unique" },
      { file: "acceptance_criteria.json", record: "V1", message: "duplicate criterion ID V1; IDs must be unique" },
    ]);
  });

  const dangling: Array<[string, (x: HandoffRecords) => void, ReadinessProblem]> = [
    [
      "a finding citing evidence that does not exist",
      (x) => x.findings.findings[0]?.evidence.push("@EVIDENCE:E9"),
      { file: "finding_register.json", record: "F1", message: "evidence cites @EVIDENCE:E9, which does not exist" },
    ],
    [
      "an action citing a finding that does not exist",
      (x) => x.actions.actions[0]?.findings.push("F9"),
      { file: "action_plan.json", record: "A1", message: "findings cites #FINDING:F9, which does not exist" },
    ],
    [
      "an action verified by a criterion that does not exist",
      (x) => x.actions.actions[1]?.verifies.push("=VERIFY:V9"),
      { file: "action_plan.json", record: "A2", message: "verifies cites =VERIFY:V9, which does not exist" },
    ],
    [
      "an action depending on an action that does not exist",
      (x) => x.actions.actions[1]?.depends_on.push("+ACTION:A9"),
      { file: "action_plan.json", record: "A2", message: "depends_on cites +ACTION:A9, which does not exist" },
    ],
  ];
  for (const [what, change, problem] of dangling) {
    it(`reports ${what}`, () => {
      expect(problemsOf(handoff(change))).toEqual([problem]);
    });
  }

  it("reports a citation written with the wrong kind of marker", () => {
    const dir = handoff((x) => {
      const [f1] = x.findings.findings;
      if (f1) f1.evidence = ["#FINDING:F2"];
    });
    expect(problemsOf(dir)).toEqual([
      {
        file: "finding_register.json",
        record: "F1",
        message: 'evidence cites "#FINDING:F2", which is not a @EVIDENCE reference; write the bare ID or @EVIDENCE:ID',
      },
    ]);
  });

  it("reports a dependency cycle with its path", () => {
    const dir = handoff((x) => {
      const [a1] = x.actions.actions;
      if (a1) a1.depends_on = ["A2"];
    });
    expect(problemsOf(dir)).toEqual([
      { file: "action_plan.json", record: "A1", message: "depends_on cycle: +ACTION:A1 → +ACTION:A2 → +ACTION:A1" },
    ]);
  });

  it("reports an action that depends on itself", () => {
    const dir = handoff((x) => {
      const [a1] = x.actions.actions;
      if (a1) a1.depends_on = ["+ACTION:A1"];
    });
    expect(problemsOf(dir)).toContainEqual({ file: "action_plan.json", record: "A1", message: "depends_on names the action itself" });
  });

  it("reports an unresolved !STOP and lists it, which makes the handoff not ready", () => {
    const r = checkReadiness(handoff((x) => x.actions.stops.push({ reason: "missing-backup", resolved: false })));
    expect(r.ready).toBe(false);
    expect(r.unresolvedStops).toEqual(["missing-backup"]);
    expect(r.problems).toEqual([
      { file: "action_plan.json", message: "unresolved !STOP:missing-backup; resolve it (set resolved: true with notes) before freezing" },
    ]);
  });

  it("reports every problem at once rather than the first", () => {
    const dir = handoff((x) => {
      x.findings.findings[0]?.evidence.push("E9");
      x.actions.actions[0]?.findings.push("F9");
      x.actions.stops.push({ reason: "legal-hold", resolved: false });
    });
    rmSync(path.join(dir, "acceptance_criteria.json"));
    expect(problemsOf(dir).map((p) => [p.file, p.record])).toEqual([
      ["acceptance_criteria.json", undefined],
      ["finding_register.json", "F1"],
      ["action_plan.json", "A1"],
      ["action_plan.json", undefined],
    ]);
  });

  it("throws a usage error for a handoff folder that is a symlink", () => {
    const real = handoff();
    const link = path.join(makeRunTempDir(), "link");
    symlinkSync(real, link);
    expect(() => checkReadiness(link)).toThrow(UsageError);
  });
});

describe("stripMarker", () => {
  it("takes the bare ID from a bare ID or its own marker, and refuses another kind's marker", () => {
    expect(stripMarker("E1", "@EVIDENCE:")).toBe("E1");
    expect(stripMarker("@EVIDENCE:E1", "@EVIDENCE:")).toBe("E1");
    expect(stripMarker("#FINDING:F1", "@EVIDENCE:")).toBeUndefined();
    expect(stripMarker("!STOP:x", "+ACTION:")).toBeUndefined();
  });
});

describe("twinlock readiness", () => {
  it("exits 0 for a ready handoff and lists the open unknowns", async () => {
    const r = await runCli(["readiness", handoff()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("open ?UNKNOWN:U1: Does the nightly batch repricer hit the same path? (owner: payments team)");
    expect(r.stdout).toContain("ready: 2 evidence, 2 findings, 1 unknown (1 open), 2 actions, 2 criteria, 5 files; 0 problems");
  });

  it("exits 1 listing each problem as `file [record]: message`, changing nothing", async () => {
    const dir = handoff((x) => x.actions.actions[0]?.findings.push("F9"));
    const before = snapshotTree(dir);
    const r = await runCli(["readiness", dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("action_plan.json [A1]: findings cites #FINDING:F9, which does not exist");
    expect(r.stdout).toContain("not ready:");
    // Run from a folder with no twinlock.yaml above it, readiness says which format it used and how to choose another.
    expect(r.stdout).toContain(
      "no twinlock.yaml was found above the handoff folder or the current folder, so the handoff was read in twinlock's own format",
    );
    expect(r.output).not.toMatch(STACK_FRAME);
    expect(snapshotTree(dir)).toEqual(before);
  });

  it("is not ready with a file that has a second hard link, which a freeze refuses, and hash refuses it too", async () => {
    const dir = handoff();
    linkSync(path.join(dir, "report.md"), path.join(dir, "report-link.md"));
    const r = await runCli(["readiness", dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("report-link.md: has 2 hard links; a handoff file must be a file of its own — copy it in instead");
    expect(r.stdout).toContain("report.md: has 2 hard links");
    const hashed = await runCli(["hash", dir]);
    expect(hashed.code).not.toBe(0);
    expect(hashed.output).toMatch(/has 2 hard links; a handoff file must be a file of its own/);
    expect(hashed.output).not.toMatch(STACK_FRAME);
  });

  it("says the format it guessed before a long list of problems too (a mission-directives handoff read as twinlock's)", async () => {
    const dir = path.join(makeRunTempDir(), "md-handoff");
    writeMdHandoff(dir, databaseMigrationHandoff());
    const r = await runCli(["readiness", dir]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split("\n");
    expect(lines.length).toBeGreaterThan(7);
    expect(lines[0]).toMatch(/^\(no twinlock\.yaml was found above the handoff folder/);
    expect(lines[lines.length - 2]).toMatch(/^\(no twinlock\.yaml was found above the handoff folder/);
  });

  it("is not ready when a record's field name holds a terminal escape or a direction mark, and never prints it raw", async () => {
    for (const key of ["zz\r\u001b[2K\u001b[1A  - owner: data team", "note\u202e", "x\u200by", "tab\there"]) {
      // twinlock's own format refuses a field it does not know, whatever its name.
      const twinlock = handoff((x) => {
        (x.actions.actions[0] as unknown as Record<string, unknown>)[key] = "forged";
      });
      const own = await runCli(["readiness", twinlock]);
      expect(own.code, JSON.stringify(key)).toBe(1);
      // Mission Directives allows fields of its own: the name is judged.
      const repo = makeRunTempDir();
      writeFileSync(path.join(repo, "twinlock.yaml"), "suite_id: repo\nhandoff:\n  format: mission-directives\n");
      const dir = path.join(repo, "handoff");
      const md = databaseMigrationHandoff();
      (md.actions.actions[0] as Record<string, unknown>)[key] = { nested: true };
      writeMdHandoff(dir, md);
      const r = await runCli(["readiness", dir]);
      expect(r.code, r.output).toBe(1);
      expect(r.stdout).toMatch(/a field name holds .+, which a person would not see as written; rename the field/);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: a raw escape or CR reaching the terminal is the point
      for (const out of [own.output, r.output]) expect(out).not.toMatch(/[\u001b\r\u202e\u200b]/);
    }
  });

  it("is not ready when an action's target holds a .. part, which reads as a file and names its folder", () => {
    const dir = handoff((x) => {
      (x.actions.actions[0] as { target: string }).target = "cart/cache_race_test.go/..:1-2";
    });
    expect(problemsOf(dir)).toContainEqual(
      expect.objectContaining({
        record: "A1",
        message: 'the target "cart/cache_race_test.go/..:1-2" holds a .. part; name the file or folder itself',
      }),
    );
  });

  it("prints the problems with --json, without the parsed records", async () => {
    const dir = handoff((x) => x.actions.stops.push({ reason: "missing-backup", resolved: false }));
    const r = await runCli(["readiness", dir, "--json"]);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({ ok: false, ready: false, unresolved_stops: ["missing-backup"] });
    expect(json.model).toBeUndefined();
  });

  it("reads the handoff in the format of the suite it sits in, wherever it is run from", async () => {
    const repo = makeRunTempDir();
    writeFileSync(path.join(repo, "twinlock.yaml"), "suite_id: repo\nhandoff:\n  format: mission-directives\n");
    const dir = path.join(repo, "agent-work", "handoff");
    writeMdHandoff(dir, databaseMigrationHandoff());
    // The test runs in the repository's root, which has no twinlock.yaml above it.
    const r = await runCli(["readiness", dir]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toMatch(/\(format mission-directives\)$/m);
  });

  it("names the format a near miss meant", async () => {
    const r = await runCli(["readiness", handoff(), "--format", "mission-directive"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'twinlock: --format "mission-directive" is not one of twinlock, mission-directives; did you mean mission-directives?\n',
    );
  });

  it("exits 2 without a stack trace for a folder that does not exist", async () => {
    const r = await runCli(["readiness", path.join(makeRunTempDir(), "missing")]);
    expect(r.code).toBe(2);
    expect(r.output).not.toMatch(STACK_FRAME);
  });
});

describe("citations in the handoff's Markdown files", () => {
  it("reports a report.md marker that points at no record, and accepts the ones that do", () => {
    const dir = handoff();
    writeFileSync(
      path.join(dir, "report.md"),
      "# Report\n\nSee #FINDING:F1 and @EVIDENCE:E1. Then +ACTION:A3 and =VERIFY:V9.\nMarkers look like +ACTION:{id} or +ACTION:ID.\n",
    );
    const r = checkReadiness(dir);
    expect(r.ready).toBe(false);
    expect(r.problems).toEqual([
      { file: "report.md", message: "cites +ACTION:A3, which does not exist in the records" },
      { file: "report.md", message: "cites =VERIFY:V9, which does not exist in the records" },
    ]);
  });

  it("reports a !STOP in the prose that the plan does not list, so a stop a reviewer reads always blocks", () => {
    const dir = handoff();
    writeFileSync(
      path.join(dir, "report.md"),
      "# Report\n\n- !STOP:missing-backup no snapshot of orders yet\nMarkers look like !STOP:{reason}.\n",
    );
    const r = checkReadiness(dir);
    expect(r.ready).toBe(false);
    expect(r.problems).toEqual([
      {
        file: "report.md",
        message:
          "names !STOP:missing-backup, which is not a stop of the plan; list it as a stop (it then blocks until resolved) or remove it",
      },
    ]);
  });
});

describe("a record file written to be read two ways", () => {
  it("is not ready when an object holds the same key twice (a hidden action list and an unresolved stop)", () => {
    const dir = handoff();
    const plan = readFileSync(path.join(dir, "action_plan.json"), "utf8").trim();
    writeFileSync(
      path.join(dir, "action_plan.json"),
      `{"actions": [], "stops": [{"reason": "production-write-not-authorised", "resolved": false}], ${plan.slice(1)}`,
    );
    const r = checkReadiness(dir);
    expect(r.ready).toBe(false);
    expect(r.problems).toContainEqual({
      file: "action_plan.json",
      message:
        'holds the key "actions" twice in one object; the gate would read one and a person or a model could read the other — keep one',
    });
  });
});

describe("stops and file names a person reads differently", () => {
  it("reports a stop in the prose spelled another way (lower case, a space, capitals)", () => {
    const dir = handoff();
    writeFileSync(path.join(dir, "NOTES.MD"), "Blocked: !stop: Missing-Backup until the DBA signs off.\n");
    const r = checkReadiness(dir);
    expect(r.ready).toBe(false);
    expect(r.problems.map((p) => `${p.file}: ${p.message}`)).toEqual([
      'NOTES.MD: names a stop as "!stop: Missing-Backup", which is not written !STOP:reason (lower-case letters, digits, dashes); write it so, as a stop of the plan',
    ]);
  });

  it("reports a file name with a line feed or an invisible character, which present and checkout would show differently", () => {
    const dir = handoff();
    writeFileSync(path.join(dir, "a\nb.md"), "x\n");
    writeFileSync(path.join(dir, "report\u200b.md"), "x\n");
    const r = checkReadiness(dir);
    expect(r.ready).toBe(false);
    expect(r.problems.map((p) => p.message)).toEqual([
      "the file name holds a tab or line feed, which a person would not see as written; rename it",
      "the file name holds U+200B, which a person would not see as written; rename it",
    ]);
  });
});

describe("file names one disk keeps apart and another folds together", () => {
  it("reports two names that differ only by case or Unicode form, so a checkout cannot fail after admission", () => {
    const dir = handoff();
    writeFileSync(path.join(dir, "Report.md"), "x\n");
    writeFileSync(path.join(dir, "caf\u00e9.md"), "x\n");
    writeFileSync(path.join(dir, "cafe\u0301.md"), "x\n");
    const r = checkReadiness(dir);
    expect(r.ready).toBe(false);
    expect(r.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/differs from .* only by case or Unicode form/),
      expect.stringMatching(/differs from .* only by case or Unicode form/),
    ]);
  });
});
