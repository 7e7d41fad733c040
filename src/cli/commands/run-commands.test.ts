import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashEvent } from "../../run/event-chain.js";
import type { RunFile } from "../../run/run-schema.js";
import { type CliRun, runCli, STACK_FRAME } from "../../test-support/run-cli.js";
import {
  cloneGateRun,
  driveTo,
  EXECUTOR,
  type GateRun,
  handEditRun,
  makeGateRun,
  PLANNER,
  RUN_EXAMPLE_SUITE,
  removeGateRuns,
  snapshotTree,
  workflowOf,
} from "../../test-support/run-fixture.js";
import { EXAMPLE_SUITE } from "../../test-support/temp-suite.js";

const OTHER_EXECUTIVES = /\bMD-(26|28|32|34|36|38)\b/;
const SOME_HASH = `sha256:${"ab".repeat(32)}`;

let frozen: GateRun;
let consentPending: GateRun;

beforeAll(async () => {
  frozen = makeGateRun();
  await driveTo(frozen, "plan_review_pending");
  consentPending = makeGateRun();
  await driveTo(consentPending, "execution_consent_pending");
});

afterAll(removeGateRuns);

/**
 * Run one command that must fail on bad input: the given exit code, exactly
 * one line on stderr (`twinlock: …`), nothing on stdout, no stack trace, and
 * every file under the run's folder byte for byte as it was.
 */
async function expectBadInput(g: GateRun, argv: string[], code: number): Promise<CliRun> {
  const before = snapshotTree(g.dir);
  const r = await runCli(argv[0] === "log" ? argv : [...argv, "--home", g.home]);
  expect({ argv: argv.map((a) => a.slice(0, 60)), code: r.code, stderr: r.stderr.slice(0, 300) }).toMatchObject({ code });
  expect(r.stdout).toBe("");
  expect(r.stderr).toMatch(/^twinlock: [^\n]+\n$/);
  expect(r.output).not.toMatch(STACK_FRAME);
  expect(r.stderr).not.toContain("internal error");
  expect(snapshotTree(g.dir)).toEqual(before);
  return r;
}

/** Every command that reads a run file, aimed at `run`. */
function runCommands(run: string): string[][] {
  return [
    ["freeze-pair-handoff", run, PLANNER],
    ["review-pair-plan", run, PLANNER, "--decision", "approved", "--handoff-hash", SOME_HASH],
    ["consent-pair-execution", run, PLANNER, "--approve", "--handoff-hash", SOME_HASH],
    ["approve-apply", run, PLANNER, "--approver", "bob"],
    ["admit", run, EXECUTOR],
    ["admit", run, EXECUTOR, "--dry"],
    ["close", run, PLANNER, "--result", "abandoned", "--residual", "x"],
    ["stop", run, "--reason", "halt"],
    ["resolve-stop", run, "--reason", "halt", "--note", "done"],
    ["pair-status", run, PLANNER],
    ["present", run, PLANNER],
    ["log", run],
    ["verify-log", run],
  ];
}

const corruptions: Array<[string, (text: string) => string, RegExp]> = [
  ["is not JSON", () => "this is not JSON {", /is not valid JSON/],
  ["was truncated", (t) => t.slice(0, Math.floor(t.length / 2)), /is not valid JSON .*it may be truncated/],
  ["is empty", () => "", /is not valid JSON/],
  [
    "fails its schema",
    (t) => {
      const j = JSON.parse(t);
      delete j.head;
      return JSON.stringify(j);
    },
    /does not match the run-file schema at head/,
  ],
  [
    "has another format tag",
    (t) => {
      const j = JSON.parse(t);
      j.format = "twinlock-run/9";
      return JSON.stringify(j);
    },
    /is format twinlock-run\/9, made by another twinlock \(this one reads twinlock-run\/2\)/,
  ],
  [
    "names an unknown state",
    (t) => {
      const j = JSON.parse(t);
      j.state.workflows[PLANNER].state = "teleported";
      return JSON.stringify(j);
    },
    /does not match the run-file schema at state\.workflows\.MD-29\.state/,
  ],
  [
    "names an unknown event type",
    (t) => {
      const j = JSON.parse(t);
      j.events[1].type = "executed";
      return JSON.stringify(j);
    },
    /does not match the run-file schema at events\.1\.type/,
  ],
];

describe("a run file that cannot be read exits 2 from every command, in one line, changing nothing", () => {
  for (const [what, corrupt, message] of corruptions) {
    it(`a run file that ${what}`, async () => {
      const g = cloneGateRun(frozen);
      writeFileSync(g.runFile, corrupt(readFileSync(g.runFile, "utf8")));
      for (const argv of runCommands(g.runFile)) {
        const r = await expectBadInput(g, argv, 2);
        expect(r.stderr).toMatch(message);
      }
    });
  }

  it("a run file that does not exist", async () => {
    const g = cloneGateRun(frozen);
    const missing = path.join(g.dir, "missing.json");
    for (const argv of runCommands(missing)) {
      const r = await expectBadInput(g, argv, 2);
      expect(r.stderr).toContain("does not exist");
    }
    expect(existsSync(missing)).toBe(false);
  });

  // V8's JSON error quotes the start of the file, newlines and all; the message must not echo it.
  it("a run file that is not JSON across several lines still gets a one-line error", async () => {
    const g = cloneGateRun(frozen);
    writeFileSync(g.runFile, '{\n "format": twinlock\n}\n');
    await expectBadInput(g, ["pair-status", g.runFile, PLANNER], 2);
  });
});

describe("a run file edited by hand is refused with exit 1 (integrity) by every command that would act on it", () => {
  it("names the edit for every command and leaves the file as it was", async () => {
    const g = cloneGateRun(frozen);
    handEditRun(g, (j) => {
      j.state.authorized_execution_prompt_ids.push(EXECUTOR);
    });
    for (const argv of runCommands(g.runFile).filter((a) => !["admit", "log", "verify-log"].includes(a[0] as string))) {
      const r = await expectBadInput(g, argv, 1);
      expect(r.stderr).toContain("the stored state differs from the replay of its events");
    }
    const verify = await runCli(["verify-log", g.runFile, "--home", g.home]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain("verify-log: first bad event");
  });

  it("refuses a run consistently rewritten to name a planner the suite does not have", async () => {
    const g = cloneGateRun(frozen);
    const text = readFileSync(g.runFile, "utf8").replaceAll('"MD-29"', '"MD-99"');
    const j = JSON.parse(text) as RunFile;
    let prev = j.events[0]?.prev as string;
    for (const e of j.events) {
      e.prev = prev;
      prev = hashEvent(e);
    }
    j.head = prev;
    writeFileSync(g.runFile, `${JSON.stringify(j, null, 1)}\n`);
    editHandoffBytes(g);
    const freeze = await expectBadInput(g, ["freeze-pair-handoff", g.runFile, "MD-99"], 1);
    // The gate home's checkpoint of this run names another head: a rebuilt chain is a rewritten history.
    expect(freeze.stderr).toContain("does not extend its checkpoint");
    const before = snapshotTree(g.dir);
    const admit = await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR, "--json"]);
    expect(admit.code).toBe(3);
    expect(
      JSON.parse(admit.stdout)
        .checks.filter((c: { ok: boolean }) => !c.ok)
        .map((c: { id: string }) => c.id),
    ).toEqual(expect.arrayContaining(["1", "pair"]));
    expect(snapshotTree(g.dir)).toEqual(before);
  });
});

/** Touch the handoff so a freeze would otherwise have something new to freeze. */
function editHandoffBytes(g: GateRun): void {
  writeFileSync(path.join(g.handoff, "extra.md"), "more\n");
}

describe("bad option values exit 2 in one line, changing nothing", () => {
  it("refuses a 1 MB --feedback without echoing it", async () => {
    const g = cloneGateRun(frozen);
    const hash = workflowOf(g).handoff?.hash as string;
    const r = await expectBadInput(
      g,
      [
        "review-pair-plan",
        g.runFile,
        PLANNER,
        "--decision",
        "changes_requested",
        "--feedback",
        "x".repeat(1024 * 1024),
        "--handoff-hash",
        hash,
      ],
      2,
    );
    expect(r.stderr).toContain("--feedback is 1048576 bytes, over the 65536-byte limit");
    expect(r.stderr.length).toBeLessThan(400);
  });

  const nulCases: Array<[string, (g: GateRun, hash: string) => string[], string]> = [
    [
      "a reviewer name",
      (g, h) => ["review-pair-plan", g.runFile, PLANNER, "--decision", "approved", "--handoff-hash", h, "--reviewer", "ali\u0000ce"],
      "--reviewer contains a NUL byte",
    ],
    [
      "feedback",
      (g, h) => ["review-pair-plan", g.runFile, PLANNER, "--decision", "changes_requested", "--feedback", "a\u0000b", "--handoff-hash", h],
      "--feedback contains a NUL byte",
    ],
    [
      "a planner ID",
      (g, h) => ["review-pair-plan", g.runFile, "MD-\u000029", "--decision", "approved", "--handoff-hash", h],
      "is not a prompt ID",
    ],
    ["an executor ID", (g) => ["admit", g.runFile, "MD-3\u00000"], "is not a prompt ID"],
    ["a stop note", (g) => ["stop", g.runFile, "--reason", "halt", "--note", "n\u0000"], "--note contains a NUL byte"],
    [
      "an --unchanged-because reason",
      (g) => ["freeze-pair-handoff", g.runFile, PLANNER, "--unchanged-because", "x\u0000"],
      "--unchanged-because contains a NUL byte",
    ],
    ["a handoff folder", (g) => ["freeze-pair-handoff", g.runFile, PLANNER, "--handoff", `${g.handoff}\u0000x`], "contains a NUL byte"],
  ];
  for (const [what, argv, message] of nulCases) {
    it(`refuses a NUL byte in ${what}`, async () => {
      const g = cloneGateRun(frozen);
      const r = await expectBadInput(g, argv(g, workflowOf(g).handoff?.hash as string), 2);
      expect(r.stderr).toContain(message);
    });
  }

  it("refuses a NUL byte in the --actor of init-run and creates no run file", async () => {
    const g = makeGateRun();
    const r = await expectBadInput(g, ["init-run", g.runFile, "--suite", g.suite, "--planner", PLANNER, "--actor", "a\u0000b"], 2);
    expect(r.stderr).toContain("contains a NUL byte");
    expect(existsSync(g.runFile)).toBe(false);
  });

  // A NUL byte must be refused as bad input before any file call sees the path.
  it("refuses a NUL byte in the run file path with exit 2", async () => {
    const g = cloneGateRun(frozen);
    await expectBadInput(g, ["freeze-pair-handoff", `${g.runFile}\u0000`, PLANNER], 2);
  });

  for (const wrong of ["deadbeef", "sha256:XYZ", `sha256:${"A".repeat(64)}`, `sha256:${"a".repeat(65)}`, `SHA256:${"a".repeat(64)}`]) {
    it(`refuses the hash form ${JSON.stringify(wrong)} on freeze, review and consent`, async () => {
      const g = cloneGateRun(consentPending);
      for (const argv of [
        ["freeze-pair-handoff", g.runFile, PLANNER, "--handoff-hash", wrong],
        ["review-pair-plan", g.runFile, PLANNER, "--decision", "approved", "--handoff-hash", wrong],
        ["consent-pair-execution", g.runFile, PLANNER, "--approve", "--handoff-hash", wrong],
      ]) {
        const r = await expectBadInput(g, argv, 2);
        expect(r.stderr).toContain("is not a handoff hash; expected sha256: followed by 64 lower-case hex digits");
      }
    });
  }

  it("refuses a malformed prompt ID, an unknown decision, mode, result, duration and budget", async () => {
    const g = cloneGateRun(consentPending);
    const hash = workflowOf(g).handoff?.hash as string;
    await expectBadInput(g, ["review-pair-plan", g.runFile, "md29", "--decision", "approved", "--handoff-hash", hash], 2);
    await expectBadInput(g, ["review-pair-plan", g.runFile, PLANNER, "--decision", "maybe", "--handoff-hash", hash], 2);
    await expectBadInput(g, ["admit", g.runFile, EXECUTOR, "--mode", "YOLO"], 2);
    await expectBadInput(g, ["close", g.runFile, PLANNER, "--result", "great"], 2);
    await expectBadInput(
      g,
      ["consent-pair-execution", g.runFile, PLANNER, "--approve", "--handoff-hash", hash, "--expires-in", "forever"],
      2,
    );
    await expectBadInput(g, ["consent-pair-execution", g.runFile, PLANNER, "--approve", "--decline", "--handoff-hash", hash], 2);
    await expectBadInput(g, ["stop", g.runFile, "--reason", "Not A Slug"], 2);
    const fresh = makeGateRun();
    await expectBadInput(fresh, ["init-run", fresh.runFile, "--suite", fresh.suite, "--planner", PLANNER, "--budget", "-1"], 2);
    await expectBadInput(fresh, ["init-run", fresh.runFile, "--suite", fresh.suite, "--planner", PLANNER, "--mode", "PLAN_ONLY"], 2);
    expect(existsSync(fresh.runFile)).toBe(false);
  });
});

describe("unknown planners and an existing run file are refused with exit 1, changing nothing", () => {
  it("refuses init-run for a planner the suite does not have, and for an executor given as planner", async () => {
    const g = makeGateRun();
    const missing = await expectBadInput(g, ["init-run", g.runFile, "--suite", g.suite, "--planner", "MD-99"], 1);
    expect(missing.stderr).toContain("MD-99 has no exact twin, so no run can be made for it");
    const executor = await expectBadInput(g, ["init-run", g.runFile, "--suite", g.suite, "--planner", EXECUTOR], 1);
    expect(executor.stderr).toContain("only a paired investigative planner has an exact twin");
    expect(executor.stderr).toContain(`${EXECUTOR} is an executor — its planner is ${PLANNER}: init-run --planner ${PLANNER}`);
    const unpaired = await expectBadInput(g, ["init-run", g.runFile, "--suite", g.suite, "--planner", "MD-26"], 1);
    expect(unpaired.stderr).toContain("MD-26 has no exact twin");
    expect(existsSync(g.runFile)).toBe(false);
  });

  it("refuses commands naming a planner that is not in the run, listing the run's planners", async () => {
    const g = cloneGateRun(frozen);
    for (const argv of [
      ["freeze-pair-handoff", g.runFile, "MD-27"],
      ["review-pair-plan", g.runFile, "MD-99", "--decision", "declined", "--feedback", "no"],
      ["consent-pair-execution", g.runFile, "MD-31", "--decline"],
      ["close", g.runFile, "MD-27", "--result", "abandoned", "--residual", "x"],
      ["pair-status", g.runFile, "MD-99"],
      ["present", g.runFile, "MD-27"],
      ["stop", g.runFile, "--reason", "halt", "--workflow", "MD-27"],
    ]) {
      const r = await expectBadInput(g, argv, 1);
      expect(r.stderr).toContain("is not a planner of this run (its planners: MD-29)");
    }
  });

  it("refuses init-run over an existing run file, leaving it byte-identical", async () => {
    const g = cloneGateRun(frozen);
    const r = await expectBadInput(g, ["init-run", g.runFile, "--suite", g.suite, "--planner", PLANNER], 1);
    expect(r.stderr).toContain("already exists; choose another name or continue that run");
  });

  it("refuses an unknown ID in the stateless pair-status", async () => {
    const g = makeGateRun();
    await expectBadInput(g, ["pair-status", "MD-99", "--suite", RUN_EXAMPLE_SUITE], 1);
    await expectBadInput(g, ["pair-status", "MD-26", "--suite", RUN_EXAMPLE_SUITE], 1);
  });

  it("refuses --actions naming an ID twice or mixing all with IDs, from init-run and admit alike, writing nothing", async () => {
    const g = makeGateRun();
    for (const actions of ["A1,+ACTION:A1", "all,A1"]) {
      const message =
        actions === "all,A1"
          ? "the action list mixes all with action IDs; give all alone, or only the IDs"
          : 'the action list names "A1" twice; list each +ACTION ID once';
      const started = await expectBadInput(g, ["init-run", g.runFile, "--suite", g.suite, "--planner", PLANNER, "--actions", actions], 2);
      expect(started.stderr).toContain(message);
      const admitted = await expectBadInput(g, ["admit", g.runFile, "MD-30", "--actions", actions], 2);
      expect(admitted.stderr).toContain(message);
    }
  });

  it("words the stateless pair-status without a revision it cannot know, and signs its commands as the suite asks", async () => {
    const status = async (suite: string) => {
      const r = await runCli(["pair-status", PLANNER, "--suite", suite, "--handoff-ready", "--json"]);
      expect(r.code, r.output).toBe(0);
      return JSON.parse(r.stdout);
    };
    const signed = await status(EXAMPLE_SUITE);
    expect(signed.question).toMatch(/^Please review MD-29's frozen plan \(hash shown after freezing\)/);
    expect(signed.next_command).toMatch(
      /^twinlock review-pair-plan RUN MD-29 --decision changes_requested\|approved\|declined --handoff-hash \S+ --key FILE$/,
    );
    expect((await status(RUN_EXAMPLE_SUITE)).next_command).not.toMatch(/--key/);
  });

  it("reports a refusal as one JSON document with --json", async () => {
    const g = cloneGateRun(frozen);
    const r = await runCli(["freeze-pair-handoff", g.runFile, "--home", g.home, "MD-27", "--json"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: false,
      error: { kind: "refused", message: expect.stringContaining("MD-27 is not a planner of this run") },
    });
  });
});

describe("pair-status --json", () => {
  const FIELDS = ["planner", "executor", "executor_title", "state", "revision", "handoff_hash", "next_action", "question"];

  it("reports the pair, state, revision, hash, next action and the review invitation from a run", async () => {
    const g = cloneGateRun(frozen);
    const r = await runCli(["pair-status", g.runFile, "--home", g.home, PLANNER, "--json"]);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    for (const f of FIELDS) expect(json).toHaveProperty(f);
    expect(json).toMatchObject({
      planner: PLANNER,
      executor: EXECUTOR,
      executor_title: "Debugging fix executor",
      state: "plan_review_pending",
      revision: 1,
      handoff_hash: workflowOf(g).handoff?.hash,
      next_action: "review the frozen plan: request changes, approve or decline",
    });
    expect(json.question).toContain("Feedback is recorded and is never taken as approval");
  });

  it("asks the consent question naming MD-30 and its title and no other executor", async () => {
    const g = cloneGateRun(consentPending);
    const r = await runCli(["pair-status", g.runFile, "--home", g.home, PLANNER, "--json"]);
    const json = JSON.parse(r.stdout);
    expect(json.state).toBe("execution_consent_pending");
    expect(json.question).toBe(
      `May MD-30 (Debugging fix executor) now act on the approved frozen plan of MD-29, revision 1 (${json.handoff_hash})? It would act in mode APPLY_SAFE, environment staging, on all the plan's actions.`,
    );
    expect(new Set(json.question.match(/MD-\d+/g))).toEqual(new Set([EXECUTOR, PLANNER]));
    expect(r.stdout).not.toMatch(OTHER_EXECUTIVES);
  });

  it("finds the same pair when asked by the executor's ID", async () => {
    const g = cloneGateRun(consentPending);
    const byExecutor = JSON.parse((await runCli(["pair-status", g.runFile, "--home", g.home, EXECUTOR, "--json"])).stdout);
    const byPlanner = JSON.parse((await runCli(["pair-status", g.runFile, "--home", g.home, PLANNER, "--json"])).stdout);
    expect(byExecutor).toEqual(byPlanner);
  });

  it("in the stateless form asks the same consent question from --handoff-ready --review-status approved", async () => {
    const r = await runCli([
      "pair-status",
      PLANNER,
      "--suite",
      RUN_EXAMPLE_SUITE,
      "--handoff-ready",
      "--review-status",
      "approved",
      "--json",
    ]);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({
      planner: PLANNER,
      executor: EXECUTOR,
      executor_title: "Debugging fix executor",
      state: "execution_consent_pending",
      revision: 0,
      handoff_hash: null,
    });
    expect(json.question).toContain("May MD-30 (Debugging fix executor) now act");
    expect(r.stdout).not.toMatch(OTHER_EXECUTIVES);
  });

  it("in the stateless form refuses a review status without a ready handoff", async () => {
    const r = await runCli(["pair-status", PLANNER, "--suite", RUN_EXAMPLE_SUITE, "--review-status", "approved"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("without --handoff-ready");
    const bad = await runCli(["pair-status", PLANNER, "--suite", RUN_EXAMPLE_SUITE, "--handoff-ready", "--review-status", "looks-fine"]);
    expect(bad.code).toBe(2);
  });
});

describe("log", () => {
  it("names the executor an admission let in, and the reason of a lifted stop", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    expect((await runCli(["stop", g.runFile, "--reason", "db-freeze", "--home", g.home])).code).toBe(0);
    expect((await runCli(["resolve-stop", g.runFile, "--reason", "db-freeze", "--note", "lifted", "--home", g.home])).code).toBe(0);
    expect((await runCli(["admit", g.runFile, EXECUTOR, "--home", g.home, "--actor", "executor-agent"])).code).toBe(0);
    const log = await runCli(["log", g.runFile]);
    expect(log.stdout).toMatch(/ stop_resolved {6}\S+ +!STOP:db-freeze {2}lifts 6\n/);
    expect(log.stdout).toMatch(/ admitted {11}executor-agent +MD-29→MD-30 {2}rev 1/);
    expect(log.code).toBe(0);
  });

  it("names the pair on a close, and exits 1 (still showing every event) when the chain is broken", async () => {
    const g = makeGateRun();
    await driveTo(g, "closed", { closedVia: "abandoned" });
    const log = await runCli(["log", g.runFile]);
    expect(log.stdout).toMatch(/ closed {13}\S+ +MD-29→MD-30 /);
    const file = JSON.parse(readFileSync(g.runFile, "utf8"));
    file.events[1].actor = "someone-else";
    writeFileSync(g.runFile, JSON.stringify(file));
    const broken = await runCli(["log", g.runFile]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/chain BROKEN at event/);
    expect(broken.stdout.split("\n").filter((l) => /^ +\d+ {2}/.test(l))).toHaveLength(file.events.length);
  });
});
