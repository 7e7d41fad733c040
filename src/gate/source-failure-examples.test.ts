import { afterAll, describe, expect, it } from "vitest";
import { RefusalError } from "../errors/errors.js";
import { ADMISSION_STOP } from "../run/admission-checks.js";
import { replayEvents } from "../run/apply-event.js";
import { readRunFile } from "../store/run-file.js";
import { runCli, STACK_FRAME } from "../test-support/run-cli.js";
import {
  admitStep,
  consent,
  driveTo,
  EXECUTOR,
  editHandoff,
  freeze,
  type GateRun,
  makeGateRun,
  PLANNER,
  removeGateRuns,
  review,
  runBytes,
  snapshotTree,
  workflowOf,
} from "../test-support/run-fixture.js";

afterAll(removeGateRuns);

/** The eleven admission checks of SPEC §5 (trust checks of signed receipts may follow them). */
const CORE_CHECKS = ["1", "2", "3", "4", "5", "6", "7", "8", "pair", "chain", "state"];
const failedCore = (checks: Array<{ id: string; ok: boolean }>) =>
  checks.filter((c) => !c.ok && CORE_CHECKS.includes(c.id)).map((c) => c.id);

/** `authorized_execution_prompt_ids` after every prefix of the run's events. */
function authorizedOverTime(g: GateRun): string[][] {
  const events = readRunFile(g.runFile).file.events;
  return events.map((_, i) => replayEvents(events.slice(0, i + 1)).authorized_execution_prompt_ids);
}

/** Run a command that must be refused with exit 1 in one line, changing nothing; returns the line. */
async function expectRefused(g: GateRun, argv: string[]): Promise<string> {
  const bytes = runBytes(g);
  const tree = snapshotTree(g.dir);
  const r = await runCli(argv);
  expect(r.code).toBe(1);
  expect(r.output).not.toMatch(STACK_FRAME);
  expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(runBytes(g).equals(bytes)).toBe(true);
  expect(snapshotTree(g.dir)).toEqual(tree);
  return r.stderr;
}

describe('source failure example "Alternate executor requested" (Requested: MD-28, Required exact twin: MD-30, Result: rejected)', () => {
  it("stops admission of MD-28 for MD-29 with exit 3 and the stop line, in the source's words", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const bytes = runBytes(g);
    const r = await runCli(["admit", g.runFile, "MD-28"]);
    expect(r.code).toBe(3);
    expect(r.stdout.split("\n")[0]).toBe(ADMISSION_STOP);
    expect(r.stdout).toContain("Requested: MD-28; Required exact twin: MD-30 (Debugging fix executor); Result: rejected");
    expect(runBytes(g).equals(bytes)).toBe(true);
    expect(workflowOf(g).state).toBe("dry_run_ready");
  });

  it("writes only MD-30 into authorized_execution_prompt_ids, at every event of a whole run", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    await runCli(["admit", g.runFile, "MD-28"]);
    await runCli(["admit", g.runFile, "MD-26"]);
    expect((await runCli(["admit", g.runFile, EXECUTOR])).code).toBe(0);
    const seen = authorizedOverTime(g);
    expect(seen.some((ids) => ids.length > 0)).toBe(true);
    for (const ids of seen) expect(ids.every((id) => id === EXECUTOR)).toBe(true);
    expect(seen.at(-1)).toEqual([EXECUTOR]);
  });

  it("offers no other executor in pair-status, and the consent receipt names MD-30 and its title", async () => {
    const g = makeGateRun();
    await driveTo(g, "execution_consent_pending");
    const status = await runCli(["pair-status", g.runFile, PLANNER, "--json"]);
    const json = JSON.parse(status.stdout);
    expect(json).toMatchObject({ executor: EXECUTOR, executor_title: "Debugging fix executor" });
    expect(json.question).toContain("MD-30 (Debugging fix executor)");
    expect(status.stdout).not.toMatch(/MD-(26|28|32|34|36|38)\b/);
    const { receipt } = await consent(g, true);
    expect(receipt).toMatchObject({ executor: EXECUTOR, executor_title: "Debugging fix executor", planner: PLANNER });
  });
});

describe('source failure example "Revision after approval": any material edit changes the hash and voids review and consent', () => {
  it("re-freezing a consented plan gives a new hash and revision+1, removes MD-30 from the authorized list and returns to plan_review_pending", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const before = workflowOf(g);
    expect(readRunFile(g.runFile).state.authorized_execution_prompt_ids).toEqual([EXECUTOR]);
    editHandoff(g, "tighten the rollback plan");
    const r = await runCli(["freeze-pair-handoff", g.runFile, PLANNER, "--actor", "planner-agent"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("earlier review and consent of this workflow no longer apply; its executor is not authorized");
    const after = workflowOf(g);
    expect(after.state).toBe("plan_review_pending");
    expect(after.revision).toBe(before.revision + 1);
    expect(after.handoff?.hash).not.toBe(before.handoff?.hash);
    expect(readRunFile(g.runFile).state.authorized_execution_prompt_ids).toEqual([]);
  });

  it("voids the old review and consent: admission fails on them, and consent or approval naming the old hash is refused", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready");
    const oldHash = workflowOf(g).handoff?.hash as string;
    editHandoff(g);
    await freeze(g);
    const admitted = await admitStep(g);
    expect(admitted.admitted).toBe(false);
    expect(failedCore(admitted.checks)).toEqual(["2", "3", "6", "state"]);
    const line = await expectRefused(g, [
      "review-pair-plan",
      g.runFile,
      PLANNER,
      "--decision",
      "approved",
      "--handoff-hash",
      oldHash,
      "--reviewer",
      "alice",
    ]);
    expect(line).toContain(`--handoff-hash ${oldHash} is revision 1, not the current revision 2`);
    await review(g, "approved");
    const consentLine = await expectRefused(g, [
      "consent-pair-execution",
      g.runFile,
      PLANNER,
      "--approve",
      "--handoff-hash",
      oldHash,
      "--user",
      "alice",
    ]);
    expect(consentLine).toContain("is revision 1, not the current revision 2");
  });

  it("also voids an approval given before consent: a re-freeze from execution_consent_pending goes back to review", async () => {
    const g = makeGateRun();
    await driveTo(g, "execution_consent_pending");
    editHandoff(g);
    const r = await freeze(g);
    expect(r.voided).toBe(true);
    expect(r.workflow.state).toBe("plan_review_pending");
    await expect(consent(g, true)).rejects.toThrow(/cannot record execution consent: MD-29 is in state plan_review_pending/);
  });

  it("refuses a re-freeze of an unchanged handoff after approval: there is nothing to re-freeze", async () => {
    const g = makeGateRun();
    await driveTo(g, "execution_consent_pending");
    const line = await expectRefused(g, ["freeze-pair-handoff", g.runFile, PLANNER]);
    expect(line).toContain("the handoff has not changed since revision 1");
  });
});

describe('source failure example "Original request already says execute": the plan is still presented for review', () => {
  it("refuses consent without a review receipt, naming the state and the review step", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const hash = workflowOf(g).handoff?.hash as string;
    const line = await expectRefused(g, [
      "consent-pair-execution",
      g.runFile,
      PLANNER,
      "--approve",
      "--handoff-hash",
      hash,
      "--user",
      "alice",
    ]);
    expect(line).toContain("MD-29 is in state plan_review_pending; the legal next step is to review the frozen plan");
    expect(workflowOf(g).consents).toEqual([]);
  });

  it("refuses consent before anything is frozen", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const line = await expectRefused(g, [
      "consent-pair-execution",
      g.runFile,
      PLANNER,
      "--approve",
      "--handoff-hash",
      `sha256:${"0".repeat(64)}`,
    ]);
    expect(line).toContain("MD-29 is in state investigating; the legal next step is to freeze the handoff");
  });

  it("stops admission of the exact twin with exit 3 when no review or consent exists, changing nothing", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const bytes = runBytes(g);
    const r = await runCli(["admit", g.runFile, EXECUTOR, "--json"]);
    expect(r.code).toBe(3);
    const json = JSON.parse(r.stdout);
    expect(json.stop).toBe(ADMISSION_STOP);
    expect(failedCore(json.checks)).toEqual(["2", "3", "5", "6", "7", "state"]);
    expect(runBytes(g).equals(bytes)).toBe(true);
  });

  it("stops admission after approval but before consent: approval is not consent", async () => {
    const g = makeGateRun();
    await driveTo(g, "execution_consent_pending");
    const r = await admitStep(g);
    expect(r.admitted).toBe(false);
    expect(failedCore(r.checks)).toEqual(["5", "6", "7", "state"]);
    expect(r.checks.find((c) => c.id === "5")?.detail).toBe("no consent recorded");
  });
});

describe('source failure example "User says looks fine before the final revision": approval names the exact version', () => {
  it("refuses approval with the hash of an older revision, naming both revisions and the current hash", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_revision_pending");
    const h1 = workflowOf(g).handoff?.hash as string;
    editHandoff(g, "windows coverage");
    await freeze(g);
    const h2 = workflowOf(g).handoff?.hash as string;
    const line = await expectRefused(g, [
      "review-pair-plan",
      g.runFile,
      PLANNER,
      "--decision",
      "approved",
      "--handoff-hash",
      h1,
      "--reviewer",
      "alice",
    ]);
    expect(line).toContain(`--handoff-hash ${h1} is revision 1, not the current revision 2; the current frozen hash is ${h2}`);
    expect(line).toContain(`twinlock present ${g.runFile} MD-29`);
    expect(workflowOf(g).state).toBe("plan_review_pending");
  });

  it("refuses approval without --handoff-hash, telling the reviewer which hash to name", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const hash = workflowOf(g).handoff?.hash as string;
    const line = await expectRefused(g, ["review-pair-plan", g.runFile, PLANNER, "--decision", "approved", "--reviewer", "alice"]);
    expect(line).toContain(`approval must name the exact version approved: pass --handoff-hash ${hash} (revision 1)`);
  });

  it("refuses approval with a hash that was never a version of this handoff", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const line = await expectRefused(g, [
      "review-pair-plan",
      g.runFile,
      PLANNER,
      "--decision",
      "approved",
      "--handoff-hash",
      `sha256:${"9".repeat(64)}`,
    ]);
    expect(line).toContain("is not a version of this handoff");
  });

  it("refuses consent without --handoff-hash, quoting the consent question", async () => {
    const g = makeGateRun();
    await driveTo(g, "execution_consent_pending");
    const line = await expectRefused(g, ["consent-pair-execution", g.runFile, PLANNER, "--approve"]);
    expect(line).toContain("consent must name the exact version: pass --handoff-hash sha256:");
    expect(line).toContain("May MD-30 (Debugging fix executor) now act on the approved frozen plan of MD-29");
  });
});

describe("feedback never counts as approval", () => {
  it("records 'looks fine, go ahead and execute' given with changes_requested as a change request, not approval", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const { receipt, workflow } = await review(g, "changes_requested", { feedback: "looks fine, approved, go ahead and execute" });
    expect(receipt.decision).toBe("changes_requested");
    expect(receipt.feedback).toBe("looks fine, approved, go ahead and execute");
    expect(workflow.state).toBe("plan_revision_pending");
    await expect(consent(g, true)).rejects.toBeInstanceOf(RefusalError);
    expect(readRunFile(g.runFile).state.authorized_execution_prompt_ids).toEqual([]);
  });

  it("needs feedback with changes_requested, as a usage error that changes nothing", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const bytes = runBytes(g);
    const hash = workflowOf(g).handoff?.hash as string;
    const r = await runCli(["review-pair-plan", g.runFile, PLANNER, "--decision", "changes_requested", "--handoff-hash", hash]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--decision changes_requested needs --feedback TEXT");
    expect(runBytes(g).equals(bytes)).toBe(true);
  });

  it("never reads a decision out of the feedback: 'approved' as feedback on a decline still closes", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const { workflow } = await review(g, "declined", { feedback: "approved" });
    expect(workflow.state).toBe("closed");
  });
});

describe("a decline closes with a declined record", () => {
  it("closes a declined plan review with a declined-execution record carrying the feedback, authorizing nobody", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const hash = workflowOf(g).handoff?.hash as string;
    const r = await runCli([
      "review-pair-plan",
      g.runFile,
      PLANNER,
      "--decision",
      "declined",
      "--feedback",
      "the risk is too high this quarter",
      "--handoff-hash",
      hash,
    ]);
    expect(r.code).toBe(0);
    const wf = workflowOf(g);
    expect(wf.state).toBe("closed");
    expect(wf.result).toMatchObject({ outcome: "declined", residual: "the risk is too high this quarter" });
    expect(wf.reviews.at(-1)?.decision).toBe("declined");
    expect(readRunFile(g.runFile).state.authorized_execution_prompt_ids).toEqual([]);
  });

  it("closes a declined consent with a declined-execution record and a declined consent receipt", async () => {
    const g = makeGateRun();
    await driveTo(g, "execution_consent_pending");
    const hash = workflowOf(g).handoff?.hash as string;
    const r = await runCli(["consent-pair-execution", g.runFile, PLANNER, "--decline", "--handoff-hash", hash, "--user", "alice"]);
    expect(r.code).toBe(0);
    const wf = workflowOf(g);
    expect(wf.state).toBe("closed");
    expect(wf.result).toMatchObject({ outcome: "declined", residual: "execution consent declined" });
    expect(wf.consents.at(-1)).toMatchObject({ decision: "declined", executor: EXECUTOR, executor_title: "Debugging fix executor" });
    expect(readRunFile(g.runFile).state.authorized_execution_prompt_ids).toEqual([]);
    const admitted = await runCli(["admit", g.runFile, EXECUTOR]);
    expect(admitted.code).toBe(3);
  });
});

describe("re-freezing after changes_requested", () => {
  it("refuses an identical hash: nothing was revised", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_revision_pending");
    const hash = workflowOf(g).handoff?.hash as string;
    const line = await expectRefused(g, ["freeze-pair-handoff", g.runFile, PLANNER]);
    expect(line).toContain(`nothing was revised: the handoff still hashes to ${hash}`);
    expect(line).toContain("--unchanged-because TEXT");
  });

  it("accepts an identical hash with --unchanged-because, as a new revision whose reason the reviewer sees in present", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_revision_pending");
    const hash = workflowOf(g).handoff?.hash as string;
    const reason = "Windows is already covered by E1: the CI fleet includes windows-2022 runners";
    const r = await runCli(["freeze-pair-handoff", g.runFile, PLANNER, "--unchanged-because", reason]);
    expect(r.code).toBe(0);
    const wf = workflowOf(g);
    expect(wf).toMatchObject({ state: "plan_review_pending", revision: 2 });
    expect(wf.handoff).toMatchObject({ hash, unchanged_because: reason });
    const present = await runCli(["present", g.runFile, PLANNER]);
    expect(present.code).toBe(0);
    expect(present.stdout).toContain(`Re-frozen without changes. The planner says why: ${reason}`);
    expect(present.stdout).toContain('Requested by alice: "Add Windows coverage and rollback evidence"');
    expect(present.stdout).toContain("nothing in the records changed");
  });
});

describe("--handoff-hash on freeze is an assertion", () => {
  it("refuses a mismatch, naming the given and the computed hash, and changes nothing", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const given = `sha256:${"1".repeat(64)}`;
    const line = await expectRefused(g, ["freeze-pair-handoff", g.runFile, PLANNER, "--handoff", g.handoff, "--handoff-hash", given]);
    expect(line).toMatch(new RegExp(`--handoff-hash ${given} does not match the handoff: twinlock computed sha256:[0-9a-f]{64}`));
    expect(workflowOf(g).state).toBe("investigating");
  });

  it("accepts the matching hash", async () => {
    const g = makeGateRun();
    await driveTo(g, "investigating");
    const hashed = await runCli(["hash", g.handoff]);
    const r = await runCli(["freeze-pair-handoff", g.runFile, PLANNER, "--handoff", g.handoff, "--handoff-hash", hashed.stdout.trim()]);
    expect(r.code).toBe(0);
    expect(workflowOf(g).handoff?.hash).toBe(hashed.stdout.trim());
  });
});
