import { renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TWINLOCK_FORMAT } from "../handoff/formats/twinlock-format.js";
import { hashHandoff } from "../handoff/hash-handoff.js";
import { folderRunStore } from "../home/folder-run-store.js";
import { frozenActionIds } from "../home/frozen-records.js";
import { ADMISSION_CHECKS } from "../run/admission/admission-check-registry.js";
import { ADMISSION_STOP, type AdmissionFacts, runAdmissionChecks } from "../run/admission-checks.js";
import { hashEvent } from "../run/event-chain.js";
import type { RunFile } from "../run/run-schema.js";
import { readRunFile } from "../store/run-file.js";
import { runCli, STACK_FRAME } from "../test-support/run-cli.js";
import {
  addPrompt,
  admitStep,
  cloneGateRun,
  consent,
  driveTo,
  EXECUTOR,
  editPrompt,
  freeze,
  frozenHash,
  type GateRun,
  handEditRun,
  homeOf,
  makeGateRun,
  PLANNER,
  pinForTest,
  removeGateRuns,
  review,
  runBytes,
  snapshotTree,
  startRun,
  storeOf,
  workflowOf,
} from "../test-support/run-fixture.js";
import { admit, recordDryRunResult } from "./admit.js";
import { freezePairHandoff } from "./freeze-pair-handoff.js";
import { pairStatusFromRun } from "./pair-status.js";

/** The ids of the admission checks, in the order admission reports them: read from the registry, so a new check needs no edit here. */
const CHECK_IDS = ADMISSION_CHECKS.map((c) => c.id);
const OTHER_HASH = `sha256:${"cd".repeat(32)}`;

/** Every executive prompt of the example suite other than MD-30. */
const OTHER_EXECUTIVES = ["MD-26", "MD-28", "MD-32", "MD-34", "MD-36", "MD-38"];

let ready: GateRun;

beforeAll(async () => {
  ready = makeGateRun();
  await driveTo(ready, "dry_run_ready");
});

afterAll(removeGateRuns);

interface Stop {
  /** Failed checks among the eleven of SPEC §5, in order. */
  failed: string[];
  /** Failed checks added beyond them (the trust checks of signed receipts). */
  trustFailed: string[];
  detail: Record<string, string>;
}

/**
 * Run `twinlock admit` twice (text, then --json) and check the stop: exit 3,
 * the stop line first, every failed check printed with FAIL, no stack trace,
 * and not one byte of the run folder changed. Returns the failed check IDs
 * and every check's detail.
 */
async function expectStop(g: GateRun, argv: string[], o: { trustMayFail?: boolean } = {}): Promise<Stop> {
  const bytes = runBytes(g);
  const tree = snapshotTree(g.dir);
  const text = await runCli(["admit", g.runFile, "--home", g.home, ...argv]);
  expect(text.code).toBe(3);
  expect(text.stdout.split("\n")[0]).toBe(ADMISSION_STOP);
  expect(text.output).not.toMatch(STACK_FRAME);
  expect(text.stdout).toMatch(/refused: \d+ check\(s\) failed; nothing was recorded/);
  const json = await runCli(["admit", g.runFile, "--home", g.home, ...argv, "--json"]);
  expect(json.code).toBe(3);
  const doc = JSON.parse(json.stdout) as {
    ok: boolean;
    stop: string;
    admitted: boolean;
    checks: Array<{ id: string; name: string; ok: boolean; detail: string }>;
  };
  expect(doc).toMatchObject({ ok: false, admitted: false, stop: ADMISSION_STOP });
  // The checks of SPEC §5 and §9 come first, in order; trust checks may follow.
  expect(doc.checks.map((c) => c.id).slice(0, CHECK_IDS.length)).toEqual(CHECK_IDS);
  for (const c of doc.checks.filter((x) => !x.ok)) expect(text.stdout).toContain(`FAIL  ${c.id.padEnd(5)} ${c.name}`);
  expect(runBytes(g).equals(bytes)).toBe(true);
  expect(snapshotTree(g.dir)).toEqual(tree);
  const failed = doc.checks.filter((c) => !c.ok).map((c) => c.id);
  if (!o.trustMayFail)
    expect(
      failed.filter((id) => !CHECK_IDS.includes(id)),
      "no check beyond the eleven fails",
    ).toEqual([]);
  return {
    failed: failed.filter((id) => CHECK_IDS.includes(id)),
    trustFailed: failed.filter((id) => !CHECK_IDS.includes(id)),
    detail: Object.fromEntries(doc.checks.map((c) => [c.id, c.detail])),
  };
}

/** A copy of the dry_run_ready run, for one test to spoil. */
const fresh = () => cloneGateRun(ready);

describe("the baseline", () => {
  it("admits nothing with --dry, yet reports every check passing and changes no byte", async () => {
    const g = fresh();
    const bytes = runBytes(g);
    const r = await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR, "--dry", "--json"]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ ok: true, admitted: true, dry: true });
    expect(doc.checks.every((c: { ok: boolean }) => c.ok)).toBe(true);
    expect(runBytes(g).equals(bytes)).toBe(true);
    expect(workflowOf(g).consents.at(-1)?.consumed_at).toBeNull();
  });
});

describe("each admission check fails alone in the pure rule (facts gathered from a real dry_run_ready run)", () => {
  async function baseFacts(): Promise<AdmissionFacts> {
    const run = readRunFile(ready.runFile);
    const wf = structuredClone(run.state.workflows[PLANNER]);
    if (!wf) throw new Error("no workflow");
    return {
      state: structuredClone(run.state),
      workflow: wf,
      requestedExecutor: EXECUTOR,
      suiteTwin: { plannerOfRequested: PLANNER, twinOfPlanner: EXECUTOR, verdict: { ok: true }, pairDigest: wf.pair_digest },
      rehash: await hashHandoff(ready.handoff),
      planActionIds: wf.handoff ? frozenActionIds(homeOf(ready), wf.handoff.files, TWINLOCK_FORMAT) : [],
      requested: {},
      chain: { ok: true },
      pin: { ok: true, detail: "pinned" },
      frozenBytes: [],
      consumedInHome: undefined,
      policyDigestNow: wf.consents.at(-1)?.policy_digest ?? null,
      executorDigestNow: wf.consents.at(-1)?.executor_digest ?? null,
      untrustedStopLifts: [],
      dryRunRequired: false,
      distrustDryRunResult: () => undefined,
      purpose: "admit",
      now: new Date(),
    };
  }
  const failedOf = (f: AdmissionFacts) => runAdmissionChecks(f).checks.filter((c) => !c.ok);

  it("passes every check for the real facts", async () => {
    expect(failedOf(await baseFacts())).toEqual([]);
  });

  it("has each check of ADMISSION_CHECKS read only the facts its row names", async () => {
    for (const check of ADMISSION_CHECKS) {
      const read = new Set<string | symbol>();
      const facts = new Proxy(await baseFacts(), {
        get(target, key, receiver) {
          read.add(key);
          return Reflect.get(target, key, receiver);
        },
      });
      check.judge(facts);
      expect(
        [...read].filter((k) => !(check.reads as readonly (string | symbol)[]).includes(k)),
        check.id,
      ).toEqual([]);
    }
  });

  const cases: Array<[string, string, (f: AdmissionFacts) => void, RegExp]> = [
    [
      "1",
      "the requested executor is not the planner's reciprocal twin",
      (f) => {
        f.requestedExecutor = "MD-28";
        f.suiteTwin.plannerOfRequested = "MD-27";
        f.suiteTwin.verdict = {
          ok: false,
          reason: "Requested: MD-28; Required exact twin: MD-30 (Debugging fix executor); Result: rejected",
        };
        // Only to isolate check 1: a consent naming the requested executor keeps check 5 passing.
        const c = f.workflow?.consents.at(-1);
        if (c) c.executor = "MD-28";
      },
      /Requested: MD-28; Required exact twin: MD-30/,
    ],
    [
      "2",
      "the approved review is for another hash",
      (f) => {
        const r = f.workflow?.reviews.at(-1);
        if (r) r.handoff_hash = OTHER_HASH;
      },
      new RegExp(`approved ${OTHER_HASH}, frozen sha256:`),
    ],
    [
      "3",
      "a later review of the same revision is not an approval",
      (f) => {
        const r = f.workflow?.reviews.at(-1);
        if (r) f.workflow?.reviews.push({ ...r, decision: "changes_requested", feedback: "one more thing" });
      },
      /revision 1: changes_requested by alice/,
    ],
    [
      "4",
      "the handoff hashes differently now",
      (f) => {
        if ("files" in f.rehash)
          f.rehash = {
            hash: OTHER_HASH,
            files: f.rehash.files.map((x) => (x.path === "action_plan.json" ? { ...x, sha256: "0".repeat(64) } : x)),
          };
      },
      /changed action_plan\.json/,
    ],
    [
      "5",
      "the consent names another executor",
      (f) => {
        const c = f.workflow?.consents.at(-1);
        if (c) c.executor = "MD-28";
      },
      /names MD-28 .*requested MD-30/,
    ],
    [
      "6",
      "the consent is for another hash",
      (f) => {
        const c = f.workflow?.consents.at(-1);
        if (c) c.handoff_hash = OTHER_HASH;
      },
      new RegExp(`consent for ${OTHER_HASH}`),
    ],
    [
      "7",
      "the requested mode lies outside the consent",
      (f) => {
        f.requested.mode = "APPLY_APPROVED";
      },
      /mode APPLY_APPROVED is not the consented APPLY_SAFE/,
    ],
    [
      "7",
      "an APPLY_APPROVED consent has no apply approval",
      (f) => {
        const c = f.workflow?.consents.at(-1);
        if (c) c.mode = "APPLY_APPROVED";
      },
      /APPLY_APPROVED needs its apply approval/,
    ],
    [
      "8",
      "a !STOP on the workflow is unresolved",
      (f) => {
        f.state.stops.push({
          seq: 99,
          reason: "missing-backup",
          workflow: PLANNER,
          raised_at: new Date().toISOString(),
          raised_by: "ops",
          note: null,
          resolved_at: null,
          resolved_by: null,
          resolution: null,
          resolution_receipt: null,
        });
      },
      /!STOP:missing-backup \(MD-29\)/,
    ],
    [
      "8",
      "a stop on the run is lifted by a receipt that names another stop",
      (f) => {
        const at = new Date().toISOString();
        f.state.stops.push({
          seq: 99,
          reason: "missing-backup",
          workflow: null,
          raised_at: at,
          raised_by: "ops",
          note: null,
          resolved_at: at,
          resolved_by: "ops",
          resolution: "done",
          resolution_receipt: {
            kind: "stop_resolution",
            run_id: f.state.run_id,
            reason: "missing-backup",
            workflow: null,
            stops: [98],
            by: "ops",
            resolution: "done",
            at,
          },
        });
        f.untrustedStopLifts = [];
      },
      /!STOP:missing-backup 99 \(run\) \(lifted by a receipt that does not name it\)/,
    ],
    [
      "pair",
      "the suite's pair digest differs from the run's",
      (f) => {
        f.suiteTwin.pairDigest = OTHER_HASH;
      },
      /the pairing changed .*a changed pairing needs a new run/,
    ],
    [
      "chain",
      "the event chain does not verify",
      (f) => {
        f.chain = { ok: false, reason: "broken at event 3: edited" };
      },
      /broken at event 3/,
    ],
    [
      "state",
      "the workflow is not dry_run_ready",
      (f) => {
        if (f.workflow) f.workflow.state = "approval_pending";
      },
      /state approval_pending; the legal next step is to record the separate apply approval/,
    ],
  ];
  for (const [id, why, spoil, reason] of cases) {
    it(`fails only check ${id} when ${why}`, async () => {
      const f = await baseFacts();
      spoil(f);
      const failed = failedOf(f);
      expect(failed.map((c) => c.id)).toEqual([id]);
      expect(failed[0]?.detail).toMatch(reason);
    });
  }
});

describe("check 1 through the CLI: only the planner's paired_prompt_id may execute", () => {
  it("refuses MD-28 for MD-29 with the source's words, and check 5 fails with it because the consent names MD-30", async () => {
    const g = fresh();
    const s = await expectStop(g, ["MD-28"]);
    expect(s.failed).toEqual(["1", "5"]);
    expect(s.detail["1"]).toContain("Requested: MD-28; Required exact twin: MD-30 (Debugging fix executor); Result: rejected");
    expect(s.detail["5"]).toContain("names MD-30 (Debugging fix executor); requested MD-28");
  });

  it("refuses MD-26, an executive of the same debugging category with no pairing", async () => {
    const s = await expectStop(fresh(), ["MD-26"]);
    expect(s.failed).toEqual(["1", "5"]);
    expect(s.detail["1"]).toContain("Requested: MD-26; Required exact twin: MD-30");
    expect(s.detail["1"]).toContain("MD-26's paired_prompt_id is null");
  });

  it("refuses every executive of the suite not named by MD-29's paired_prompt_id", async () => {
    const g = fresh();
    for (const id of OTHER_EXECUTIVES) {
      const s = await expectStop(g, [id]);
      expect({ id, failed: s.failed }).toEqual({ id, failed: ["1", "5"] });
      expect(s.detail["1"]).toContain(`Required exact twin: ${EXECUTOR}`);
    }
  });

  it("refuses an executor chosen by keyword: a new executive titled exactly 'Debugging fix executor' in the same category", async () => {
    const g = makeGateRun({ copySuite: true });
    addPrompt(
      g.suite,
      "debugging/md-40-debugging-fix-executor-v2.md",
      [
        "---",
        "prompt_id: MD-40",
        "title: Debugging fix executor",
        "prompt_role: executive",
        "category: debugging",
        "risk_level: medium",
        "description: Implements debugging fixes; matches every keyword of MD-30.",
        "pairing_required: false",
        "paired_prompt_id: null",
        "requires: [MD-01]",
        "---",
        "",
        "Debugging fix executor for MD-29 plans.",
        "",
      ].join("\n"),
    );
    await driveTo(g, "dry_run_ready");
    const s = await expectStop(g, ["MD-40"]);
    expect(s.failed).toEqual(["1", "5"]);
    expect(s.detail["1"]).toContain("Requested: MD-40; Required exact twin: MD-30");
  });

  it("refuses an executor the suite does not have", async () => {
    const s = await expectStop(fresh(), ["MD-99"]);
    expect(s.failed).toEqual(["1", "5"]);
    expect(s.detail["1"]).toContain("MD-99 is not a prompt of the pinned suite");
  });

  it("refuses MD-28 for MD-29 in a composite run that also holds MD-27 → MD-28", async () => {
    const g = makeGateRun();
    await startRun(g, { planners: ["MD-27", PLANNER] });
    await freeze(g);
    await review(g, "approved");
    await consent(g, true);
    const s = await expectStop(g, ["MD-28", "--planner", PLANNER]);
    expect(s.failed).toEqual(["1", "5"]);
    expect(s.detail["1"]).toContain("Required exact twin: MD-30");
    // Asked without --planner, MD-28 is matched to its own planner MD-27, whose plan is not even frozen.
    const own = await expectStop(g, ["MD-28"], { trustMayFail: true });
    expect(own.failed).not.toContain("1");
    expect(own.failed).toEqual(expect.arrayContaining(["2", "3", "4", "5", "6", "state"]));
  });
});

/** Spoil a copy of the ready run by hand, leaving the chain as it was. */
function handEdited(edit: (json: RunFile) => void): GateRun {
  const g = fresh();
  handEditRun(g, edit);
  return g;
}
const wfOf = (json: RunFile) => json.state.workflows[PLANNER] as NonNullable<RunFile["state"]["workflows"][string]>;

describe("checks 2, 3, 5 and 6 through the CLI: only a hand edit can spoil them, so the chain check fails too", () => {
  it("check 2: an approved review edited to another hash is named, with both hashes", async () => {
    const s = await expectStop(
      handEdited((j) => {
        const r = wfOf(j).reviews.at(-1);
        if (r) r.handoff_hash = OTHER_HASH;
      }),
      [EXECUTOR],
    );
    expect(s.failed).toEqual(["2", "chain"]);
    expect(s.detail["2"]).toMatch(new RegExp(`approved ${OTHER_HASH}, frozen sha256:[0-9a-f]{64}`));
    expect(s.detail.chain).toContain("differs from the replay");
  });

  it("check 3: a later review that is not an approval is named with its decision", async () => {
    const s = await expectStop(
      handEdited((j) => {
        const r = wfOf(j).reviews.at(-1);
        if (r) wfOf(j).reviews.push({ ...r, decision: "changes_requested", feedback: "wait" });
      }),
      [EXECUTOR],
    );
    expect(s.failed).toEqual(["3", "chain"]);
    expect(s.detail["3"]).toBe("revision 1: changes_requested by alice");
  });

  it("check 5: a consent edited to name MD-28 does not admit MD-30", async () => {
    const s = await expectStop(
      handEdited((j) => {
        const c = wfOf(j).consents.at(-1);
        if (c) c.executor = "MD-28";
      }),
      [EXECUTOR],
    );
    expect(s.failed).toEqual(["5", "chain"]);
    expect(s.detail["5"]).toContain("names MD-28");
  });

  it("check 6: a consent edited to another hash is named, with both hashes", async () => {
    const s = await expectStop(
      handEdited((j) => {
        const c = wfOf(j).consents.at(-1);
        if (c) c.handoff_hash = OTHER_HASH;
      }),
      [EXECUTOR],
    );
    expect(s.failed).toEqual(["6", "chain"]);
    expect(s.detail["6"]).toMatch(new RegExp(`consent for ${OTHER_HASH} \\(revision 1\\), frozen sha256:[0-9a-f]{64} \\(revision 1\\)`));
  });
});

describe("check 4: no handoff file changed since freezing (re-hashed now, each change named)", () => {
  const cases: Array<[string, (dir: string) => void, string]> = [
    ["a file is edited", (d) => writeFileSync(path.join(d, "action_plan.json"), '{"actions":[],"stops":[]}\n'), "changed action_plan.json"],
    ["a file is added", (d) => writeFileSync(path.join(d, "extra-notes.txt"), "one more thing\n"), "added extra-notes.txt"],
    ["a file is removed", (d) => rmSync(path.join(d, "report.md")), "removed report.md"],
    [
      "a file is renamed",
      (d) => renameSync(path.join(d, "report.md"), path.join(d, "report-final.md")),
      "added report-final.md, removed report.md",
    ],
  ];
  for (const [what, change, named] of cases) {
    it(`fails only check 4 when ${what} after consent, naming "${named}"`, async () => {
      const g = fresh();
      change(g.handoff);
      const s = await expectStop(g, [EXECUTOR]);
      expect(s.failed).toEqual(["4"]);
      expect(s.detail["4"]).toContain(named);
    });
  }

  it("fails only check 4 when the handoff folder is gone, saying it cannot be re-hashed", async () => {
    const g = fresh();
    rmSync(g.handoff, { recursive: true });
    const s = await expectStop(g, [EXECUTOR]);
    expect(s.failed).toEqual(["4"]);
    expect(s.detail["4"]).toContain("cannot re-hash the handoff");
  });
});

describe("check 7: mode, environment, actions, budget, expiry and apply approval lie within the consent", () => {
  it("fails only check 7 for a mode outside the consent", async () => {
    const s = await expectStop(fresh(), [EXECUTOR, "--mode", "APPLY_APPROVED"]);
    expect(s.failed).toEqual(["7"]);
    expect(s.detail["7"]).toBe("mode APPLY_APPROVED is not the consented APPLY_SAFE");
  });

  it("fails only check 7 for an environment outside the consent", async () => {
    const s = await expectStop(fresh(), [EXECUTOR, "--environment", "production"]);
    expect(s.failed).toEqual(["7"]);
    expect(s.detail["7"]).toBe("environment production is not the consented staging");
  });

  it("fails only check 7 for an action that is not in the frozen plan", async () => {
    const s = await expectStop(fresh(), [EXECUTOR, "--actions", "A1,+ACTION:A9"]);
    expect(s.failed).toEqual(["7"]);
    expect(s.detail["7"]).toBe("actions +ACTION:A9 are not in the frozen plan");
  });

  it("fails only check 7 for a planned action outside a consent scoped to A1", async () => {
    const g = makeGateRun();
    await driveTo(g, "dry_run_ready", { actions: ["A1"] });
    const s = await expectStop(g, [EXECUTOR, "--actions", "A2"]);
    expect(s.failed).toEqual(["7"]);
    expect(s.detail["7"]).toBe("actions A2 are outside the consented scope A1");
  });

  it("fails only check 7 when the two planned actions exceed a budget of 1, and admits one action within it", async () => {
    const g = makeGateRun();
    const init = await runCli([
      "init-run",
      g.runFile,
      "--home",
      g.home,
      "--suite",
      g.suite,
      "--planner",
      PLANNER,
      "--mode",
      "APPLY_SAFE",
      "--budget",
      "1",
      "--actor",
      "planner-agent",
    ]);
    expect(init.code).toBe(0);
    await driveTo(g, "dry_run_ready", { create: false });
    const s = await expectStop(g, [EXECUTOR]);
    expect(s.failed).toEqual(["7"]);
    expect(s.detail["7"]).toBe("2 actions exceed the budget of 1");
    const one = await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR, "--actions", "A1", "--dry"]);
    expect(one.code).toBe(0);
  });

  it("fails only check 7 once the consent has expired (the library with `now` injected), and changes nothing", async () => {
    const g = fresh();
    const expires = workflowOf(g).consents.at(-1)?.expires_at;
    expect(expires).toBeTruthy();
    const bytes = runBytes(g);
    const late = await admitStep(g, { now: () => new Date(Date.parse(expires as string) + 1) });
    expect(late.admitted).toBe(false);
    expect(late.checks.filter((c) => !c.ok).map((c) => c.id)).toEqual(["7"]);
    expect(late.checks.find((c) => c.id === "7")?.detail).toBe(`the consent expired at ${expires}`);
    expect(runBytes(g).equals(bytes)).toBe(true);
    const justInTime = await admitStep(g, { now: () => new Date(Date.parse(expires as string) - 1), dry: true });
    expect(justInTime.admitted).toBe(true);
  });

  it("stops an APPLY_APPROVED run without approve-apply: check 7 names the missing approval (and the workflow is still approval_pending)", async () => {
    const g = makeGateRun();
    await driveTo(g, "approval_pending", { mode: "APPLY_APPROVED" });
    const s = await expectStop(g, [EXECUTOR]);
    expect(s.failed).toEqual(["7", "state"]);
    expect(s.detail["7"]).toContain("APPLY_APPROVED needs its apply approval (twinlock approve-apply)");
    const approved = await runCli(["approve-apply", g.runFile, "--home", g.home, PLANNER, "--approver", "bob"]);
    expect(approved.code).toBe(0);
    expect((await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR])).code).toBe(0);
  });
});

describe("check 8: no unresolved !STOP on the run or the workflow", () => {
  it("fails only check 8 for a stop on the whole run, until resolve-stop clears it", async () => {
    const g = fresh();
    expect(
      (await runCli(["stop", g.runFile, "--home", g.home, "--reason", "missing-backup", "--note", "no snapshot of the cart db"])).code,
    ).toBe(0);
    const s = await expectStop(g, [EXECUTOR]);
    expect(s.failed).toEqual(["8"]);
    expect(s.detail["8"]).toBe("!STOP:missing-backup (run)");
    expect(
      (await runCli(["resolve-stop", g.runFile, "--home", g.home, "--reason", "missing-backup", "--note", "snapshot taken"])).code,
    ).toBe(0);
    expect((await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR])).code).toBe(0);
  });

  it("has pair-status say to resolve an open stop (run or workflow), not to admit, so the refusal's pointer is no loop", async () => {
    const g = fresh();
    const status = () => pairStatusFromRun(folderRunStore(homeOf(g)), g.runFile, PLANNER);
    expect((await runCli(["stop", g.runFile, "--home", g.home, "--reason", "missing-backup"])).code).toBe(0);
    const onRun = await status();
    expect(onRun.next_step.operation).toBe("resolve-stop");
    expect(onRun.next_command).toMatch(/^twinlock resolve-stop \S+ --reason missing-backup --stop \d+ --note TEXT/);
    expect((await runCli(["resolve-stop", g.runFile, "--home", g.home, "--reason", "missing-backup", "--note", "done"])).code).toBe(0);
    expect((await runCli(["stop", g.runFile, "--home", g.home, "--reason", "flaky-ci", "--workflow", PLANNER])).code).toBe(0);
    expect((await status()).next_command).toMatch(/^twinlock resolve-stop \S+ --reason flaky-ci --stop \d+ --note TEXT/);
    expect((await runCli(["resolve-stop", g.runFile, "--home", g.home, "--reason", "flaky-ci", "--note", "fixed"])).code).toBe(0);
    expect((await status()).next_step.operation).toBe("exec");
  });

  it("fails only check 8 for a stop on the workflow, until resolve-stop clears it", async () => {
    const g = fresh();
    expect((await runCli(["stop", g.runFile, "--home", g.home, "--reason", "!STOP:flaky-ci", "--workflow", PLANNER])).code).toBe(0);
    const s = await expectStop(g, [EXECUTOR]);
    expect(s.failed).toEqual(["8"]);
    expect(s.detail["8"]).toBe("!STOP:flaky-ci (MD-29)");
    expect((await runCli(["resolve-stop", g.runFile, "--home", g.home, "--reason", "flaky-ci", "--note", "CI fixed"])).code).toBe(0);
    expect((await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR, "--dry"])).code).toBe(0);
  });

  it("is not blocked by a stop on another workflow of a composite run", async () => {
    const g = makeGateRun();
    await startRun(g, { planners: ["MD-27", PLANNER] });
    await freeze(g);
    await review(g, "approved");
    await consent(g, true);
    expect((await runCli(["stop", g.runFile, "--home", g.home, "--reason", "perf-lab-down", "--workflow", "MD-27"])).code).toBe(0);
    expect((await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR])).code).toBe(0);
  });
});

describe("the pin check: the executor file is the one pinned, so an edit after the run began is refused", () => {
  // Pinned prompt files are bound by their digest: any edit of the executor (its title, its requires, its canonical
  // metadata) fails the pin check, and with the pinned policy unknown the trust checks fail closed too.
  it.each([
    ["its title", (t: string) => t.replace("title: Debugging fix executor", "title: Debugging fix executor (v2)")],
    ["its requires list", (t: string) => t.replace("requires: [MD-29, MD-01]", "requires: [MD-29, MD-01, MD-02]")],
    ["its canonical metadata", (t: string) => t.replace("reviewed_handoff_required: true", "reviewed_handoff_required: false")],
  ])("fails the pin check when the executor's %s changes after init-run, naming the file and both digests", async (_what, edit) => {
    const g = makeGateRun({ copySuite: true });
    await driveTo(g, "dry_run_ready");
    editPrompt(g.suite, "debugging/md-30-debugging-executor.md", edit);
    const s = await expectStop(g, [EXECUTOR], { trustMayFail: true });
    expect(s.failed).toContain("pin");
    expect(s.detail.pin).toMatch(
      /MD-30's prompt file \(debugging\/md-30-debugging-executor\.md\) changed since suite \S+ was pinned \(pinned sha256:[0-9a-f]{64}, now sha256:[0-9a-f]{64}\); a person reviews the change and re-pins/,
    );
  });

  it("admits again once a person re-pins the edited suite and the plan is decided again", async () => {
    const g = makeGateRun({ copySuite: true });
    await driveTo(g, "dry_run_ready");
    editPrompt(g.suite, "debugging/md-30-debugging-executor.md", (t) => t.replace("## ", "## Note\n\nEdited.\n\n## "));
    expect((await expectStop(g, [EXECUTOR], { trustMayFail: true })).failed).toContain("pin");
    await pinForTest(g.suite, true, homeOf(g));
    // The executor digest bound by review and consent is of the old file: the decisions are asked again.
    const s = await expectStop(g, [EXECUTOR], { trustMayFail: true });
    expect(s.failed).not.toContain("pin");
    expect(s.failed).toContain("executor-file");
  });
});

describe("before any decision (exec or admit tried before review and consent)", () => {
  it("says each decision check fails because no review or consent stands yet, not by a line that reads like a pass", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const s = await expectStop(g, [EXECUTOR], { trustMayFail: true });
    expect(s.failed).toEqual(expect.arrayContaining(["executor-file", "policy"]));
    for (const id of ["executor-file", "policy"]) {
      expect(s.detail[id]).toMatch(
        /^no review or consent stands yet .*\(now sha256:[0-9a-f]{64}\): a person reviews the plan and consents first$/,
      );
      expect(s.detail[id]).not.toMatch(/is still|^policy sha256/);
    }
  });
});

describe("the chain check: a hand-edited run file never reaches executing", () => {
  it("fails only the chain check when MD-28 is added to authorized_execution_prompt_ids by hand", async () => {
    const g = handEdited((j) => {
      j.state.authorized_execution_prompt_ids.push("MD-28");
    });
    for (const who of ["MD-28", EXECUTOR]) {
      const s = await expectStop(g, [who]);
      expect(s.failed).toEqual(who === EXECUTOR ? ["chain"] : ["1", "5", "chain"]);
      expect(s.detail.chain).toContain("differs from the replay");
    }
  });

  it("refuses a workflow whose state was set to dry_run_ready by hand before any consent", async () => {
    const g = makeGateRun();
    await driveTo(g, "execution_consent_pending");
    handEditRun(g, (j) => {
      wfOf(j).state = "dry_run_ready";
      j.state.authorized_execution_prompt_ids = [EXECUTOR];
    });
    const s = await expectStop(g, [EXECUTOR]);
    expect(s.failed).toEqual(["5", "6", "7", "chain"]);
    expect(s.detail["5"]).toBe("no consent recorded");
  });

  it("refuses a forged log whose chain was rebuilt, because replay re-checks every receipt", async () => {
    const g = fresh();
    handEditRun(g, (j) => {
      const approval = j.events.find((e) => e.type === "plan_approved");
      (approval?.data.receipt as { handoff_hash: string }).handoff_hash = OTHER_HASH;
      let prev = j.events[0]?.prev as string;
      for (const e of j.events) {
        e.prev = prev;
        prev = hashEvent(e);
      }
      j.head = prev;
    });
    const s = await expectStop(g, [EXECUTOR]);
    expect(s.failed).toContain("chain");
    expect(s.detail.chain).toMatch(/event \d+ \(plan_approved\) is invalid/);
  });
});

describe("admission that passes", () => {
  it("records an admission receipt with every check, moves to executing and uses up the consent", async () => {
    const g = fresh();
    const r = await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR, "--actor", "executor-agent"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("admitted MD-30 for MD-29: state executing; the consent is used up");
    const run = readRunFile(g.runFile);
    const wf = run.state.workflows[PLANNER];
    expect(wf?.state).toBe("executing");
    expect(wf?.admissions).toHaveLength(1);
    expect(wf?.admissions[0]).toMatchObject({
      kind: "admission",
      executor: EXECUTOR,
      planner: PLANNER,
      actor: "executor-agent",
      handoff_hash: wf?.handoff?.hash,
    });
    expect(wf?.admissions[0]?.checks.map((c) => c.id).slice(0, CHECK_IDS.length)).toEqual(CHECK_IDS);
    expect(wf?.admissions[0]?.checks.every((c) => c.ok)).toBe(true);
    expect(wf?.consents.at(-1)?.consumed_at).not.toBeNull();
    expect(run.state.authorized_execution_prompt_ids).toEqual([EXECUTOR]);
    expect(run.file.events.at(-1)?.type).toBe("admitted");
  });

  it("refuses a second admission on the same consent, naming when it was used", async () => {
    const g = fresh();
    expect((await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR])).code).toBe(0);
    const s = await expectStop(g, [EXECUTOR]);
    expect(s.failed).toEqual(["7", "consumed", "state"]);
    expect(s.detail["7"]).toMatch(/the consent was already used by an admission at /);
    expect(s.detail.consumed).toMatch(/used by an admission at .* \(run run_[0-9a-f]{16}\)/);
  });

  it("refuses exec on a pair admit already moved to executing, saying when its consent was used and what is true to do instead", async () => {
    const g = fresh();
    expect((await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR])).code).toBe(0);
    const usedAt = workflowOf(g).consents.at(-1)?.consumed_at as string;
    const r = await runCli(["exec", g.runFile, "--home", g.home, EXECUTOR, "--hook-only", "--", "true"]);
    expect(r.code, r.output).toBe(3);
    expect(r.stdout).toContain(
      `MD-30 is already executing for MD-29: its consent was used by an admission (\`admit\` or \`exec\`) at ${usedAt}, and a consent admits once;`,
    );
    expect(r.stdout).toContain("no command binds an agent's session to an admission already made.");
    expect(r.stdout).toMatch(
      /To run an agent on this work: close it \(twinlock close .* MD-29 --result failed\|rolled_back\|verified\), start a new run,/,
    );
    expect(r.stdout).toContain("start the agent with `twinlock exec` instead of `admit`");
    expect(r.stdout).not.toContain("next: twinlock pair-status");
  });

  it("records nothing with --dry even when every check passes, so the consent is still unused", async () => {
    const g = fresh();
    const bytes = runBytes(g);
    const r = await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR, "--dry"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--dry: nothing recorded, consent not used");
    expect(runBytes(g).equals(bytes)).toBe(true);
    expect((await runCli(["admit", g.runFile, "--home", g.home, EXECUTOR])).code).toBe(0);
  });

  it("stops --dry with exit 3 on a failing check, also without recording", async () => {
    const g = fresh();
    const s = await expectStop(g, ["MD-28", "--dry"]);
    expect(s.failed).toEqual(["1", "5"]);
  });
});

describe("an executor that declares dry_run_required", () => {
  async function readyWithDryRunRequired(mode: "APPLY_SAFE" | "DRAFT_ONLY" = "APPLY_SAFE"): Promise<GateRun> {
    const g = makeGateRun({ copySuite: true });
    editPrompt(g.suite, "debugging/md-30-debugging-executor.md", (t) =>
      t.replace("exact_twin_only: true", "exact_twin_only: true\ndry_run_required: true"),
    );
    await driveTo(g, "dry_run_ready", { mode });
    return g;
  }
  const dryRun = (g: GateRun) =>
    admit({ run: g.runFile, store: folderRunStore(homeOf(g)), executor: EXECUTOR, actor: "executor-agent", purpose: "dry-run" });
  const result = (g: GateRun, r: "passed" | "failed") =>
    recordDryRunResult({
      run: g.runFile,
      store: folderRunStore(homeOf(g)),
      executor: EXECUTOR,
      result: r,
      note: `dry run ${r}`,
      actor: "executor-agent",
    });

  it("is refused in an APPLY mode until a dry run of the same hash is recorded and passed, naming the rule", async () => {
    const g = await readyWithDryRunRequired();
    const s = await expectStop(g, [EXECUTOR]);
    expect(s.failed).toEqual(["dry-run"]);
    expect(s.detail["dry-run"]).toMatch(/MD-30 declares dry_run_required: record a dry run of revision 1 and its passed result first/);

    const dry = await dryRun(g);
    expect(dry.admitted).toBe(true);
    expect(workflowOf(g)).toMatchObject({ state: "dry_run_ready" });
    expect(workflowOf(g).consents.at(-1)?.consumed_at).toBeNull();
    expect((await admitStep(g, { dry: true })).checks.filter((c) => !c.ok).map((c) => c.id)).toEqual(["dry-run"]);

    await result(g, "failed");
    expect((await admitStep(g, { dry: true })).admitted).toBe(false);
    await dryRun(g);
    await result(g, "passed");
    const admitted = await admitStep(g);
    expect(admitted.admitted).toBe(true);
    expect(admitted.checks.find((c) => c.id === "dry-run")?.detail).toMatch(/dry run of revision 1 passed at /);
  });

  it("sends the next step to dry-run until one passed, and its signed result is a receipt verify-receipts checks", async () => {
    const g = await readyWithDryRunRequired();
    const before = await pairStatusFromRun(folderRunStore(homeOf(g)), g.runFile, PLANNER);
    expect(before.next_command).toMatch(/^twinlock dry-run .* MD-30 --checkout DIR/);
    expect(before.next_action).toMatch(/MD-30 declares dry_run_required/);
    await dryRun(g);
    // Admitted, no result yet: the result is what comes next (another dry run would not help).
    const open = await pairStatusFromRun(folderRunStore(homeOf(g)), g.runFile, PLANNER);
    expect(open.next_command).toMatch(/^twinlock dry-run-result .* MD-30 --result passed\|failed --note TEXT/);
    await result(g, "passed");
    const after = await pairStatusFromRun(folderRunStore(homeOf(g)), g.runFile, PLANNER);
    expect(after.next_command).toMatch(/^twinlock exec \S+ MD-30 -- AGENT-COMMAND…$/);
    const verified = await runCli(["verify-receipts", g.runFile, "--home", homeOf(g).dir]);
    expect(verified.stdout).toMatch(/dry_run_result passed by executor-agent/);
  });

  it("the consent's printed next step is the dry run (not an admission that would be refused), and a failed dry run's is a revised plan", async () => {
    const g = makeGateRun({ copySuite: true });
    editPrompt(g.suite, "debugging/md-30-debugging-executor.md", (t) =>
      t.replace("exact_twin_only: true", "exact_twin_only: true\ndry_run_required: true"),
    );
    await driveTo(g, "execution_consent_pending", { mode: "APPLY_SAFE" });
    const consent = await runCli([
      "consent-pair-execution",
      g.runFile,
      PLANNER,
      "--approve",
      "--handoff-hash",
      frozenHash(g),
      "--user",
      "alice",
      "--home",
      homeOf(g).dir,
    ]);
    expect(consent.code, consent.output).toBe(0);
    expect(consent.stdout).toMatch(/^next: twinlock dry-run \S+ MD-30 --checkout DIR$/m);
    await dryRun(g);
    const failed = await runCli([
      "dry-run-result",
      g.runFile,
      EXECUTOR,
      "--result",
      "failed",
      "--note",
      "the migration timed out",
      "--home",
      homeOf(g).dir,
    ]);
    expect(failed.code, failed.output).toBe(0);
    expect(failed.stdout).toMatch(/^next: twinlock freeze-pair-handoff \S+ MD-29$/m);
    const status = await pairStatusFromRun(folderRunStore(homeOf(g)), g.runFile, PLANNER);
    expect(status.next_action).toMatch(/the dry run of revision 1 failed \(the migration timed out\); revise the handoff/);
  });

  it("needs no dry run in DRAFT_ONLY, and a dry-run result needs an open dry run", async () => {
    const g = await readyWithDryRunRequired("DRAFT_ONLY");
    await expect(result(g, "passed")).rejects.toThrow(/has no open dry run of revision 1/);
    expect((await admitStep(g)).admitted).toBe(true);
  });

  it("refuses a hand-made dry_run_result without a dry run (replay)", async () => {
    const g = await readyWithDryRunRequired();
    const wf = workflowOf(g);
    const { applyEvent } = await import("../run/apply-event.js");
    const run = readRunFile(g.runFile);
    expect(() =>
      applyEvent(run.state, {
        seq: run.file.events.length + 1,
        at: new Date().toISOString(),
        actor: "agent",
        type: "dry_run_result",
        data: {
          planner: PLANNER,
          receipt: {
            kind: "dry_run_result",
            run_id: run.state.run_id,
            planner: PLANNER,
            executor: EXECUTOR,
            handoff_hash: wf.handoff?.hash,
            revision: 1,
            result: "passed",
            note: "trust me",
            by: "agent",
            at: new Date().toISOString(),
          },
        },
        prev: run.file.head,
      }),
    ).toThrow(/a dry-run result needs an open dry run of the same hash and revision/);
  });
});

describe("the handoff folder and the gate home never overlap, by real path (attack: a link in the agent's folder into the home)", () => {
  it("refuses to freeze a folder reached through a link whose real path is the gate home", async () => {
    const g = makeGateRun();
    await startRun(g);
    const link = path.join(g.dir, "link-to-home");
    symlinkSync(g.home, link);
    await expect(freezePairHandoffFor(g, link)).rejects.toThrow(/a folder of the gate.s own/);
  });
});

async function freezePairHandoffFor(g: GateRun, dir: string) {
  return freezePairHandoff({ store: storeOf(g), run: g.runFile, planner: PLANNER, handoffDir: dir, actor: "planner-agent" });
}
