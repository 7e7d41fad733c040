import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeDemoHandoff } from "../demo/demo-handoff.js";
import { databaseMigrationHandoff, writeMdHandoff } from "../test-support/mission-directives-handoff.js";
import { runCli, runCliJson, STACK_FRAME } from "../test-support/run-cli.js";
import { EXECUTOR, type GateRun, makeGateRun, PLANNER, pinForTest, removeGateRuns, workflowOf } from "../test-support/run-fixture.js";

afterAll(removeGateRuns);

/** A run folder whose own suite copy names the handoff format, with a Mission Directives handoff written. */
async function mdRun(format = "mission-directives"): Promise<GateRun> {
  const g = makeGateRun({ copySuite: true });
  appendFileSync(path.join(g.suite, "twinlock.yaml"), `handoff:\n  format: ${format}\n`);
  rmSync(g.handoff, { recursive: true });
  writeMdHandoff(g.handoff, databaseMigrationHandoff());
  await pinForTest(g.suite, true, undefined);
  return g;
}

const cli = (g: GateRun, ...argv: string[]) => runCli([...argv, "--home", g.home]);

describe("the whole flow on a Mission Directives handoff (suite pinned with handoff: {format: mission-directives})", () => {
  it("init-run → freeze → present → review → consent → admit scoped to ACTION- IDs → executing", async () => {
    const g = await mdRun();
    const run = g.runFile;
    const init = await cli(
      g,
      "init-run",
      run,
      "--suite",
      g.suite,
      "--planner",
      PLANNER,
      "--mode",
      "APPLY_SAFE",
      "--environment",
      "staging",
      "--actions",
      "ACTION-1,ACTION-2",
      "--actor",
      "planner-agent",
    );
    expect(init.stderr).toBe("");
    expect(init.code).toBe(0);

    const freeze = await cli(g, "freeze-pair-handoff", run, PLANNER, "--handoff", g.handoff, "--actor", "planner-agent");
    expect(freeze.stderr).toBe("");
    expect(freeze.code).toBe(0);
    const hash = workflowOf(g).handoff?.hash as string;

    const present = await cli(g, "present", run, PLANNER);
    expect(present.code).toBe(0);
    const md = present.stdout;
    expect(md).toContain("records read as the pinned suite's **mission-directives** format");
    expect(md).toContain(
      "### `#FINDING:FINDING-1` The one-step migration blocks writes to orders for minutes (severity: high, status: validated, confidence: high)",
    );
    expect(md).toContain("- `@EVIDENCE:EVIDENCE-2` metric grafana/orders-write-rate: orders sees 1.2k writes/s at peak (trust: trusted)");
    expect(md).toContain("### `+ACTION:ACTION-3` Add the NOT NULL constraint as NOT VALID, then validate it");
    expect(md).toContain("- target: migrations/0043_region_not_null.sql");
    expect(md).toContain("- risk: **level: high; blast_radius: one service**");
    expect(md).toContain("- rollback: steps: ALTER TABLE orders DROP CONSTRAINT region_not_null");
    expect(md).toContain("- verified by: `=VERIFY:VERIFY-1`, `=VERIFY:VERIFY-3`");
    expect(md).toContain("- after: `+ACTION:ACTION-2`");
    expect(md).toContain("- `=VERIFY:VERIFY-3` Write latency p99 stays under 50 ms (not required) — method: grafana/orders-write-latency");
    expect(md).toContain("- `?UNKNOWN:UNKNOWN-1` Does the nightly export read orders with a long transaction? owner: data team");
    expect(md).toContain("- `!STOP:missing-backup` resolved — snapshot orders-2025-05-02 taken at 08:40");

    expect(
      (await cli(g, "review-pair-plan", run, PLANNER, "--decision", "approved", "--handoff-hash", hash, "--reviewer", "alice")).code,
    ).toBe(0);
    expect((await cli(g, "consent-pair-execution", run, PLANNER, "--approve", "--handoff-hash", hash, "--user", "alice")).code).toBe(0);

    // An action outside the frozen plan is refused by name; nothing is used.
    const outside = await runCliJson(["admit", run, EXECUTOR, "--actions", "ACTION-9", "--dry", "--home", g.home]);
    expect(outside.code).toBe(3);
    expect(outside.stdout).toContain("+ACTION:ACTION-9 are not in the frozen plan");

    const admitted = await cli(g, "admit", run, EXECUTOR, "--actions", "ACTION-1", "--actor", "executor-agent");
    expect(admitted.stderr).toBe("");
    expect(admitted.code).toBe(0);
    expect(workflowOf(g).state).toBe("executing");
  });

  it("readiness --suite reads the handoff in the suite's format; --format says which without a suite", async () => {
    const g = await mdRun();
    const bySuite = await runCli(["readiness", g.handoff, "--suite", g.suite]);
    expect(bySuite.code).toBe(0);
    expect(bySuite.stdout).toContain(
      "ready: 3 evidence, 2 findings, 2 unknowns (1 open), 3 actions, 3 criteria, 5 files; 0 problems (format mission-directives)",
    );
    expect(bySuite.stdout).toContain("open ?UNKNOWN:UNKNOWN-1: Does the nightly export");
    expect((await runCli(["readiness", g.handoff, "--format", "mission-directives"])).code).toBe(0);
    const asTwinlock = await runCli(["readiness", g.handoff, "--format", "twinlock"]);
    expect(asTwinlock.code).toBe(1);
    expect(asTwinlock.stdout).toContain("(format twinlock)");
  });

  it("readiness refuses a bad --format, --format custom, and --suite with --format, in one line with exit 2", async () => {
    const g = await mdRun();
    for (const argv of [
      ["readiness", g.handoff, "--format", "yaml"],
      ["readiness", g.handoff, "--format", "custom"],
      ["readiness", g.handoff, "--format", "twinlock", "--suite", g.suite],
    ]) {
      const r = await runCli(argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.stderr).toMatch(/^twinlock: [^\n]+\n$/);
      expect(r.output).not.toMatch(STACK_FRAME);
    }
  });
});

describe("the agent cannot switch the format (the pinned config decides)", () => {
  it("a twinlock-format handoff in a mission-directives suite is refused at freeze, whatever the folder holds", async () => {
    const g = await mdRun();
    rmSync(g.handoff, { recursive: true });
    writeDemoHandoff(g.handoff);
    // The handoff tries to name its own format: a file is only a file.
    writeFileSync(path.join(g.handoff, "twinlock.yaml"), "suite_id: x\nhandoff:\n  format: twinlock\n");
    expect((await cli(g, "init-run", g.runFile, "--suite", g.suite, "--planner", PLANNER, "--actor", "planner-agent")).code).toBe(0);
    const r = await cli(g, "freeze-pair-handoff", g.runFile, PLANNER, "--handoff", g.handoff, "--actor", "planner-agent");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('evidence_index.json: (top level): missing required field "snapshot_id"');
  });

  it("editing the suite's format after pinning is refused, naming both digests", async () => {
    const g = await mdRun();
    expect((await cli(g, "init-run", g.runFile, "--suite", g.suite, "--planner", PLANNER, "--actor", "planner-agent")).code).toBe(0);
    const config = path.join(g.suite, "twinlock.yaml");
    writeFileSync(config, readFileSync(config, "utf8").replace("format: mission-directives", "format: twinlock"));
    rmSync(g.handoff, { recursive: true });
    writeDemoHandoff(g.handoff);
    const r = await cli(g, "freeze-pair-handoff", g.runFile, PLANNER, "--handoff", g.handoff, "--actor", "planner-agent");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /twinlock\.yaml of suite \S+ changed since it was pinned \(pinned sha256:[0-9a-f]{64}, now sha256:[0-9a-f]{64}\)/,
    );
  });

  it("a run file rewritten to name another suite (one of another format) is refused", async () => {
    const g = await mdRun();
    expect((await cli(g, "init-run", g.runFile, "--suite", g.suite, "--planner", PLANNER, "--actor", "planner-agent")).code).toBe(0);
    const other = makeGateRun();
    const runJson = JSON.parse(readFileSync(g.runFile, "utf8"));
    runJson.state.suite.root = other.suite;
    writeFileSync(g.runFile, JSON.stringify(runJson));
    rmSync(g.handoff, { recursive: true });
    writeDemoHandoff(g.handoff);
    const r = await cli(g, "freeze-pair-handoff", g.runFile, PLANNER, "--handoff", g.handoff, "--actor", "planner-agent");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^twinlock: [^\n]+\n$/);
    expect(r.stderr).toContain("edited by hand");
  });
});
