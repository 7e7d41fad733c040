import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { actionTargetGlobs } from "../conformance/action-targets.js";
import { changedFilesFromList } from "../conformance/changed-files.js";
import { checkConformance, sameChange } from "../conformance/check-conformance.js";
import { readRunFile } from "../store/run-file.js";
import { runCli } from "../test-support/run-cli.js";
import {
  closeVerifiedAsOlderRuns,
  conformingChange,
  driveTo,
  makeGateRun,
  PLANNER,
  removeGateRuns,
  storeOf,
  workflowOf,
} from "../test-support/run-fixture.js";
import { closeWorkflow, VERIFIED_NEEDS_CHANGE } from "./close-workflow.js";
import { raiseStop } from "./hard-stops.js";
import { presentPlan } from "./present-plan.js";

afterAll(removeGateRuns);

describe("close records the executed change against the plan", () => {
  it("lists the skipped action, the extra file and the criterion without evidence, and present shows plan beside execution", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    // The executor wrote the test (A1) but never touched cart/cache.go (A2), and edited a CI file the plan never named.
    const root = path.join(g.dir, "checkout");
    mkdirSync(path.join(root, "cart"), { recursive: true });
    mkdirSync(path.join(root, ".github"), { recursive: true });
    writeFileSync(path.join(root, "cart/cache_race_test.go"), "package cart\n");
    writeFileSync(path.join(root, ".github/ci.yml"), "on: push\n");
    const executed = {
      changed: [
        { path: "cart/cache_race_test.go", sha256: `sha256:${"a".repeat(64)}` },
        { path: ".github/ci.yml", sha256: `sha256:${"b".repeat(64)}` },
      ],
      criteria: [{ id: "V1", result: "passed" as const, command: "go test -run TestCartCacheRace -count=50 ./cart/" }],
      root,
    };
    // "verified" and a change that departs from the plan contradict each other: refused, naming each deviation, nothing recorded.
    await expect(
      closeWorkflow({ run: g.runFile, store: storeOf(g), planner: PLANNER, result: "verified", actor: "a-person", executed }),
    ).rejects.toThrow(
      "MD-29's change does not conform to the approved plan (criterion V2 has no evidence; action A2 not done; .github/ci.yml is outside the plan), so the work is not verified",
    );
    expect(workflowOf(g).state).toBe("executing");
    await closeWorkflow({
      run: g.runFile,
      store: storeOf(g),
      planner: PLANNER,
      result: "failed",
      residual: "A2 not done; a CI file edited outside the plan",
      actor: "executor-agent",
      executed: {
        changed: [
          { path: "cart/cache_race_test.go", sha256: `sha256:${"a".repeat(64)}` },
          { path: ".github/ci.yml", sha256: `sha256:${"b".repeat(64)}` },
        ],
        criteria: [{ id: "V1", result: "passed", command: "go test -run TestCartCacheRace -count=50 ./cart/" }],
        root,
      },
    });
    const result = workflowOf(g).result;
    expect(result?.execution?.conformance).toEqual({
      actions_not_done: ["A2"],
      files_outside_plan: [".github/ci.yml"],
      criteria_without_evidence: ["V2"],
      criteria_failed: [],
    });
    const md = (await presentPlan(storeOf(g), g.runFile, PLANNER)).markdown;
    expect(md).toContain("## Plan versus execution");
    expect(md).toContain("| `+ACTION:A2` | cart/cache.go:80-95 | **not done** |");
    expect(md).toContain("`.github/ci.yml` sha256 bbbbbbbbbbbb… — **outside the plan**");
    expect(md).toContain("| `=VERIFY:V2` | **no evidence** | |");
    // The recorded change is part of the chain: the run still verifies by replay.
    expect(readRunFile(g.runFile).state.workflows[PLANNER]?.result?.execution?.changed_files).toHaveLength(2);
  });

  it("records the change from the CLI with --changed-files and --criterion, and refuses a criterion the plan lacks", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const list = path.join(g.dir, "changed.txt");
    writeFileSync(list, "cart/cache.go\ncart/cache_race_test.go\n");
    const bad = await runCli([
      "close",
      g.runFile,
      PLANNER,
      "--result",
      "verified",
      "--criterion",
      "V9=passed:true",
      "--changed-files",
      list,
      "--home",
      g.home,
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/V9 is not an acceptance criterion of MD-29's plan; its criteria are V1, V2/);
    // A failed acceptance criterion and "verified" contradict each other: refused, nothing recorded.
    const contradicts = await runCli([
      "close",
      g.runFile,
      PLANNER,
      "--result",
      "verified",
      "--changed-files",
      list,
      "--criterion",
      "V1=passed:true",
      "--criterion",
      "V2=failed:go test -race ./cart/...",
      "--home",
      g.home,
    ]);
    expect(contradicts.code).toBe(1);
    // The listed files are not in the checkout the command runs in: deleted targets, and a deletion does not do a write action.
    expect(contradicts.stderr).toMatch(
      /acceptance criterion V2 failed; action A1 not done \(cart\/cache_race_test\.go deleted; an action's target is done by the file written, not deleted\); action A2 not done \(cart\/cache\.go deleted;.*\), so the work is not verified; close with --result failed/,
    );
    expect(workflowOf(g).state).toBe("executing");
    // The same list over a checkout that holds both files conforms.
    const root = path.join(g.dir, "checkout");
    mkdirSync(path.join(root, "cart"), { recursive: true });
    writeFileSync(path.join(root, "cart/cache.go"), "package cart\n");
    writeFileSync(path.join(root, "cart/cache_race_test.go"), "package cart\n");
    await closeWorkflow({
      run: g.runFile,
      store: storeOf(g),
      planner: PLANNER,
      result: "verified",
      actor: "a-person",
      executed: {
        changed: changedFilesFromList(list, root),
        criteria: [
          { id: "V1", result: "passed", command: "go test -run TestCartCacheRace ./cart/" },
          { id: "V2", result: "passed", command: "go test -race ./cart/..." },
        ],
        root,
      },
    });
    expect(workflowOf(g).result?.execution?.conformance.actions_not_done).toEqual([]);
    expect(workflowOf(g).result?.execution?.changed_files.map((f) => f.mode)).toEqual(["100644", "100644"]);
  });

  it("refuses verified when a target was deleted (no action field says it deletes), naming the deleted file, and records nothing", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const good = conformingChange(g);
    // Attack: the README's list of two files that do not exist, so "every action done" stood on two deletions.
    const executed = {
      ...good,
      changed: good.changed.map((f) => (f.path === "cart/cache.go" ? { path: f.path, sha256: null } : f)),
    };
    await expect(
      closeWorkflow({ run: g.runFile, store: storeOf(g), planner: PLANNER, result: "verified", actor: "a-person", executed }),
    ).rejects.toThrow(
      "(action A2 not done (cart/cache.go deleted; an action's target is done by the file written, not deleted)), so the work is not verified",
    );
    expect(workflowOf(g).state).toBe("executing");
  });

  it("refuses verified over a submodule pointer in an action's target, naming it as a submodule pointer, not a file", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const good = conformingChange(g);
    const executed = {
      ...good,
      changed: good.changed.map((f) =>
        f.path === "cart/cache.go" ? { path: f.path, sha256: `sha256:${"c".repeat(64)}`, mode: "160000" as const } : f,
      ),
    };
    await expect(
      closeWorkflow({ run: g.runFile, store: storeOf(g), planner: PLANNER, result: "verified", actor: "a-person", executed }),
    ).rejects.toThrow(
      "(cart/cache.go is a submodule pointer, not a file; action A2 not done (cart/cache.go is a submodule pointer; an action's target is done by the file written, not deleted)), so the work is not verified",
    );
    expect(workflowOf(g).state).toBe("executing");
    // Closed failed, the pointer is recorded with its mode, and replays.
    await closeWorkflow({ run: g.runFile, store: storeOf(g), planner: PLANNER, result: "failed", actor: "a-person", executed });
    expect(readRunFile(g.runFile).state.workflows[PLANNER]?.result?.execution?.changed_files).toContainEqual({
      path: "cart/cache.go",
      sha256: `sha256:${"c".repeat(64)}`,
      mode: "160000",
    });
  });

  it("compares a change recorded before modes were by its digest alone, and a recorded mode with the mode too", () => {
    const d = `sha256:${"e".repeat(64)}`;
    expect(sameChange({ sha256: d }, { sha256: d, mode: "100755" })).toBe(true);
    expect(sameChange({ sha256: d, mode: "100644" }, { sha256: d, mode: "100755" })).toBe(false);
    expect(sameChange({ sha256: d, mode: "100644" }, { sha256: d, mode: "120000" })).toBe(false);
    expect(sameChange({ sha256: null }, { sha256: d, mode: "160000" })).toBe(false);
  });

  it("never counts a deleted file or a submodule pointer as doing an action, whatever the paths", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ path: fc.constantFrom("cart/cache.go", "cart/x.go", "a.txt"), gone: fc.boolean() }), { maxLength: 6 }),
        (files) => {
          const changed = files.map((f) =>
            f.gone ? { path: f.path, sha256: null } : { path: f.path, sha256: `sha256:${"d".repeat(64)}`, mode: "160000" as const },
          );
          const c = checkConformance({ actions: [{ id: "A1", target: "cart/" }], criteria: [], changed, evidence: [] });
          expect(c.actions_not_done).toEqual(["A1"]);
        },
      ),
    );
  });

  it("reads the handoff folder's name literally: a folder the agent called * or ** does not put every changed file inside the plan", async () => {
    for (const name of ["*", "**"]) {
      const g = makeGateRun();
      const renamed = path.join(g.dir, name);
      renameSync(g.handoff, renamed);
      g.handoff = renamed;
      await driveTo(g, "executing");
      await closeWorkflow({
        run: g.runFile,
        store: storeOf(g),
        planner: PLANNER,
        result: "failed",
        residual: "a CI file edited outside the plan",
        actor: "executor-agent",
        executed: {
          changed: [{ path: ".github/workflows/ci.yml", sha256: `sha256:${"b".repeat(64)}` }],
          criteria: [
            { id: "V1", result: "passed", command: "true" },
            { id: "V2", result: "passed", command: "true" },
          ],
          root: g.dir,
        },
      });
      expect(workflowOf(g).result?.execution?.conformance.files_outside_plan, name).toEqual([".github/workflows/ci.yml"]);
    }
  });

  it("still replays a run closed without an execution record, as runs closed before issue 13 were", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    await closeVerifiedAsOlderRuns(g);
    expect(workflowOf(g).result).not.toHaveProperty("execution");
    expect(readRunFile(g.runFile).state.workflows[PLANNER]?.state).toBe("closed");
  });

  it("reads an action's target as path globs, dropping line ranges", () => {
    expect(actionTargetGlobs("cart/cache.go:80-95")).toEqual(["cart/cache.go"]);
    expect(actionTargetGlobs("src/**/*.ts, docs/ and the README.md")).toEqual(["src/**/*.ts", "docs/**", "README.md"]);
    expect(actionTargetGlobs("../etc/passwd /abs/path")).toEqual([]);
    expect(actionTargetGlobs(null)).toEqual([]);
  });

  it("counts every changed file either inside an action's target or outside the plan, never both", () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-c]{1,2}(\/[a-c]{1,2}){0,2}$/), { maxLength: 12 }), (paths) => {
        const actions = [
          { id: "A1", target: "a/**" },
          { id: "A2", target: "b/c" },
        ];
        const c = checkConformance({ actions, criteria: [], changed: paths.map((p) => ({ path: p, sha256: null })), evidence: [] });
        for (const p of paths)
          expect(c.files_outside_plan.includes(p)).toBe(!(p === "a" || p.startsWith("a/") || p === "b/c" || p.startsWith("b/c/")));
      }),
    );
  });

  it("refuses verified while a person's stop holds the run, and records nothing", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    await raiseStop({ store: storeOf(g), run: g.runFile, reason: "bad-change", actor: "alice" });
    await expect(
      closeWorkflow({
        run: g.runFile,
        store: storeOf(g),
        planner: PLANNER,
        result: "verified",
        actor: "a-person",
        executed: conformingChange(g),
      }),
    ).rejects.toThrow("MD-29 is held by the stop bad-change on the whole run, so the work is not verified");
    expect(workflowOf(g).state).toBe("executing");
  });
});

describe("a verified close holds evidence of the change", () => {
  it("refuses verified with no recorded change, from the library and from the CLI (exit 2, one line naming what to pass), and records nothing", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const before = readFileSync(g.runFile);
    await expect(
      closeWorkflow({ run: g.runFile, store: storeOf(g), planner: PLANNER, result: "verified", residual: "none", actor: "a-person" }),
    ).rejects.toThrow(VERIFIED_NEEDS_CHANGE);
    // Criteria alone name no changed file: the same refusal (attack: a verified close with `--criterion V1=passed:true` and nothing else).
    for (const extra of [[], ["--criterion", "V1=passed:true", "--criterion", "V2=passed:true"]]) {
      const r = await runCli(["close", g.runFile, PLANNER, "--result", "verified", ...extra, "--home", g.home]);
      expect(r.code, r.output).toBe(2);
      expect(r.stderr.trimEnd().split("\n")).toEqual([`twinlock: ${VERIFIED_NEEDS_CHANGE}`]);
    }
    expect(readFileSync(g.runFile).equals(before)).toBe(true);
    expect(workflowOf(g).state).toBe("executing");
  });

  it("records the verified close with the change it was judged by", async () => {
    const g = makeGateRun();
    await driveTo(g, "closed", { closedVia: "verified" });
    const result = workflowOf(g).result;
    expect(result?.outcome).toBe("verified");
    expect(result?.execution?.changed_files.map((f) => f.path)).toEqual(["cart/cache_race_test.go", "cart/cache.go"]);
    expect(result?.execution?.conformance).toEqual({
      actions_not_done: [],
      files_outside_plan: [],
      criteria_without_evidence: [],
      criteria_failed: [],
    });
  });

  it("still takes failed and rolled_back after execution without a change or a --residual", async () => {
    for (const result of ["failed", "rolled_back"] as const) {
      const g = makeGateRun();
      await driveTo(g, "executing");
      const r = await runCli(["close", g.runFile, PLANNER, "--result", result, "--home", g.home]);
      expect(r.code, r.output).toBe(0);
      expect(workflowOf(g).result?.outcome).toBe(result);
    }
  });

  it("does not tell a refused verified close that a --residual is needed after execution", async () => {
    const g = makeGateRun();
    await driveTo(g, "executing");
    const list = path.join(g.dir, "changed.txt");
    writeFileSync(list, "cart/cache_race_test.go\n");
    const r = await runCli(["close", g.runFile, PLANNER, "--result", "verified", "--changed-files", list, "--home", g.home]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/close with --result failed or rolled_back \(the deviations are kept with the close\)$/m);
    expect(r.stderr).not.toContain("--residual");
  });
});

describe("close's exit codes follow the README's table", () => {
  it("refuses a result the state does not allow as an illegal transition (exit 1), and a missing --residual before execution as bad usage (exit 2)", async () => {
    const before = makeGateRun();
    await driveTo(before, "plan_review_pending");
    const verified = await runCli(["close", before.runFile, PLANNER, "--result", "verified", "--home", before.home]);
    expect(verified.code, verified.output).toBe(1);
    expect(verified.stderr).toMatch(
      /MD-29 is plan_review_pending, not executing, so it cannot close verified: close it with --result abandoned or failed/,
    );
    const listed = await runCli([
      "close",
      before.runFile,
      PLANNER,
      "--result",
      "failed",
      "--residual",
      "x",
      "--changed-files",
      "/dev/null",
      "--home",
      before.home,
    ]);
    expect(listed.code, listed.output).toBe(1);
    expect(listed.stderr).toMatch(/only an executing workflow records an executed change/);
    const noResidual = await runCli(["close", before.runFile, PLANNER, "--result", "abandoned", "--home", before.home]);
    expect(noResidual.code).toBe(2);
    expect(noResidual.stderr).toMatch(/closing before execution needs --residual TEXT/);
    const running = makeGateRun();
    await driveTo(running, "executing");
    const abandoned = await runCli(["close", running.runFile, PLANNER, "--result", "abandoned", "--residual", "x", "--home", running.home]);
    expect(abandoned.code, abandoned.output).toBe(1);
    expect(abandoned.stderr).toMatch(/MD-29 is executing, so it cannot close abandoned/);
    expect(workflowOf(running).state).toBe("executing");
  });
});
