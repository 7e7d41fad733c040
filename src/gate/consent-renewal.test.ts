import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RefusalError } from "../errors/errors.js";
import { folderRunStore } from "../home/folder-run-store.js";
import { readRunFile } from "../store/run-file.js";
import { runCli, STACK_FRAME } from "../test-support/run-cli.js";
import {
  admitStep,
  approveApplyStep,
  consent,
  driveTo,
  EXECUTOR,
  freeze,
  type GateRun,
  homeOf,
  makeGateRun,
  PLANNER,
  removeGateRuns,
  review,
  runBytes,
  startRun,
  testHome,
  workflowOf,
} from "../test-support/run-fixture.js";
import { consentPairExecution } from "./consent-pair-execution.js";
import { pairStatusFromRun } from "./pair-status.js";

afterAll(removeGateRuns);

const HOUR = 3_600_000;

/** Alice's consent to the current hash, for one hour from `now`. */
function grantConsent(g: GateRun, now: () => Date) {
  return consentPairExecution({
    store: folderRunStore(testHome()),
    run: g.runFile,
    planner: PLANNER,
    approve: true,
    handoffHash: workflowOf(g).handoff?.hash,
    user: "alice",
    expiresInMs: HOUR,
    now,
  });
}

/** A run whose consent was granted at t0 with a one-hour lifetime. */
async function consentedAt(t0: Date, mode: "APPLY_SAFE" | "APPLY_APPROVED" = "APPLY_SAFE") {
  const g = makeGateRun();
  await startRun(g, { mode });
  await freeze(g);
  await review(g, "approved");
  await grantConsent(g, () => t0);
  return g;
}

describe("a consent that expired unused", () => {
  const t0 = new Date("2026-06-01T10:00:00Z");
  const later = () => new Date(t0.getTime() + 2 * HOUR);

  it("is refused at admission, and pair-status says to ask the consent question again", async () => {
    const g = await consentedAt(t0);
    const r = await admitStep(g, { now: later });
    expect(r.admitted).toBe(false);
    expect(r.checks.find((c) => c.id === "7")?.detail).toMatch(/expired at 2026-06-01T11:00:00.000Z/);
    const status = await pairStatusFromRun(folderRunStore(homeOf(g)), g.runFile, PLANNER, later());
    expect(status.state).toBe("dry_run_ready");
    expect(status.next_action).toMatch(/ask the consent question again: the consent expired at 2026-06-01T11:00:00.000Z unused/);
    expect(status.question).toMatch(/^May MD-30 \(Debugging fix executor\) now act on the approved frozen plan of MD-29/);
  });

  it("can be asked again on the same hash, and the renewed consent admits the exact twin", async () => {
    const g = await consentedAt(t0);
    await grantConsent(g, later);
    expect(workflowOf(g).consents).toHaveLength(2);
    expect(workflowOf(g).state).toBe("dry_run_ready");
    const r = await admitStep(g, { now: later });
    expect(r.admitted).toBe(true);
    expect(workflowOf(g).state).toBe("executing");
  });

  it("can be withdrawn, closing the workflow and removing the executor from authorized_execution_prompt_ids", async () => {
    const g = await consentedAt(t0);
    expect(readRunFile(g.runFile).state.authorized_execution_prompt_ids).toEqual([EXECUTOR]);
    await consentPairExecution({
      store: folderRunStore(testHome()),
      run: g.runFile,
      planner: PLANNER,
      approve: false,
      user: "alice",
      now: later,
    });
    expect(workflowOf(g).state).toBe("closed");
    expect(readRunFile(g.runFile).state.authorized_execution_prompt_ids).toEqual([]);
  });

  it("on an APPLY_APPROVED run needs a new apply approval bound to the renewed consent", async () => {
    const g = await consentedAt(t0, "APPLY_APPROVED");
    await approveApplyStep(g);
    expect(workflowOf(g).state).toBe("dry_run_ready");
    await grantConsent(g, later);
    expect(workflowOf(g).state).toBe("approval_pending");
    const r = await admitStep(g, { now: later });
    expect(r.admitted).toBe(false);
  });
});

describe("a consent still valid", () => {
  it("is not asked again: the refusal names the state and the legal next step, and changes nothing", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const before = runBytes(g);
    const error = await consent(g, true).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RefusalError);
    expect((error as Error).message).toMatch(
      /MD-29 is in state dry_run_ready .*the legal next step is to run the exact twin.s agent through the gate .*only after it expires unused/,
    );
    expect(runBytes(g).equals(before)).toBe(true);
  });
});

describe("close on a closed workflow", () => {
  it("is refused with exit 1 naming the state, not usage advice", async () => {
    const g = makeGateRun();
    await driveTo(g, "closed", { closedVia: "verified" });
    const r = await runCli(["close", g.runFile, PLANNER, "--result", "verified"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/MD-29 is in state closed; there is no legal next step/);
  });
});

describe("decisions against a suite that cannot be trusted", () => {
  it("refuses a review when the run's suite folder is gone, and verify-receipts does not report all clear", async () => {
    const g = makeGateRun({ copySuite: true });
    await startRun(g);
    await freeze(g);
    await review(g, "approved");
    renameSync(g.suite, `${g.suite}-moved`);
    const r = await runCli(["verify-receipts", g.runFile]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/suite folder .* is gone/);
    expect(r.output).not.toMatch(STACK_FRAME);
    const admitted = await admitStep(g);
    expect(admitted.admitted).toBe(false);
  });

  it("refuses a decision when twinlock.yaml was removed from the run's suite (signing must not switch off)", async () => {
    const g = makeGateRun({ copySuite: true });
    await startRun(g);
    await freeze(g);
    renameSync(path.join(g.suite, "twinlock.yaml"), path.join(g.suite, "twinlock.yaml.bak"));
    const error = await review(g, "approved").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RefusalError);
    expect((error as Error).message).toMatch(/twinlock.yaml is missing at .*; a pinned suite needs its twinlock.yaml/);
  });

  it("refuses a decision when the folder now holds another suite", async () => {
    const g = makeGateRun({ copySuite: true });
    await startRun(g);
    await freeze(g);
    const config = path.join(g.suite, "twinlock.yaml");
    writeFileSync(config, readFileSync(config, "utf8").replace(/^suite_id: .*$/m, "suite_id: someone-else"));
    const error = await review(g, "approved").catch((e: unknown) => e);
    // The pin names what the person trusted; any byte of twinlock.yaml changed is refused naming both digests.
    expect((error as Error).message).toMatch(
      /twinlock.yaml of suite copy-[0-9a-f]+ changed since it was pinned \(pinned sha256:[0-9a-f]{64}, now sha256:[0-9a-f]{64}\); re-pin after reviewing the change/,
    );
  });
});

describe("keygen", () => {
  it("writes NAME.pub beside the 0600 private key, so the public key can be listed again", async () => {
    const g = makeGateRun();
    const r = await runCli(["keygen", "--name", "dana", "--out", path.join(g.dir, "keys")]);
    expect(r.code).toBe(0);
    const pub = path.join(g.dir, "keys", "dana.pub");
    expect(existsSync(pub)).toBe(true);
    expect(r.stdout).toContain(readFileSync(pub, "utf8").trim());
    expect((await runCli(["keygen", "--name", "dana", "--out", path.join(g.dir, "keys")])).code).toBe(1);
  });

  it("names a public key given as --key as a public key, not as a private key others can read", async () => {
    const g = makeGateRun();
    await runCli(["keygen", "--name", "erin", "--out", path.join(g.dir, "keys")]);
    const pub = path.join(g.dir, "keys", "erin.pub");
    const r = await runCli(["trust", "pin", "--suite", g.suite, "--key", pub, "--home", path.join(g.dir, "home")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `twinlock: key file ${pub} is a public key; --key takes the private key (NAME.key, not NAME.pub) made by \`twinlock keygen\`\n`,
    );
  });
});

describe("init-run input", () => {
  it.each([
    [["--environment", ""], /--environment must not be empty/],
    [["--actions", ","], /--actions needs at least one \+ACTION ID/],
    [["--budget", "0"], /--budget 0 would admit nothing/],
    [
      ["--mode", "PLAN_ONLY"],
      /--mode \(a mode a run executes in\) "PLAN_ONLY" is not one of DRAFT_ONLY, APPLY_SAFE, APPLY_APPROVED, VERIFY_ONLY/,
    ],
  ])("refuses %j with exit 2 and writes no run file", async (extra, message) => {
    const g = makeGateRun();
    const r = await runCli(["init-run", g.runFile, "--suite", g.suite, "--planner", PLANNER, ...(extra as string[])]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message as RegExp);
    expect(existsSync(g.runFile)).toBe(false);
  });
});

describe("pair-status after a handoff file changed", () => {
  it("re-hashes the folder and makes re-freezing the next step, naming the file", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    writeFileSync(path.join(g.handoff, "report.md"), "edited after consent\n");
    const status = await pairStatusFromRun(folderRunStore(homeOf(g)), g.runFile, PLANNER);
    expect(status.handoff_changed).toEqual(["changed report.md"]);
    expect(status.next_action).toMatch(/^re-freeze: the handoff changed since revision 1 was frozen \(changed report\.md\)/);
    expect(status.next_command).toBe(`twinlock freeze-pair-handoff ${g.runFile} MD-29`);
  });
});
