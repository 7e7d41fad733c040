import type { KeyObject } from "node:crypto";
import { createHash, createPrivateKey } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { demoHandoffRecords, writeDemoHandoff } from "../demo/demo-handoff.js";
import { admit } from "../gate/admit.js";
import { approveApply } from "../gate/approve-apply.js";
import { closeWorkflow } from "../gate/close-workflow.js";
import { consentPairExecution } from "../gate/consent-pair-execution.js";
import { freezePairHandoff } from "../gate/freeze-pair-handoff.js";
import { initRun } from "../gate/init-run.js";
import { type ReviewDecision, reviewPairPlan } from "../gate/review-pair-plan.js";
import type { HandoffRecords } from "../handoff/handoff-records.js";
import { folderRunStore } from "../home/folder-run-store.js";
import { snapshotHandoff } from "../home/frozen-bytes.js";
import { type GateHome, openGateHome } from "../home/gate-home.js";
import { readRun, updateRun } from "../home/run-ledger.js";
import { listPins, pinSuite } from "../home/suite-pins.js";
import type { RunFile, Workflow } from "../run/run-schema.js";
import type { State } from "../run/transition-table.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";
import type { Mode } from "../suite/prompt.js";
import { configDigest } from "./config-digest.js";
import { renameSuiteId, unsignedExampleSuite } from "./temp-suite.js";

/** The bundled example suite (read only; copy it with `copySuite` to change it). */
/** The example suite as the rule tests use it: signed receipts and separate duties off (see unsignedExampleSuite). */
export const RUN_EXAMPLE_SUITE = unsignedExampleSuite();

/** The test file's gate home (TWINLOCK_HOME, set per test file by the test setup). */
export function testHome(): GateHome {
  return openGateHome(process.env.TWINLOCK_HOME, { create: true });
}

const pinned = new Set<string>();

/** The person's key that pins suites in every test home (the first pin makes it the home's pinner). */
export const TEST_PINNER = createPrivateKey({
  // A fixed test-only seed, the same in every test process, so a home copied from the template (pinned with it) accepts it.
  key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.alloc(32, 7)]),
  format: "der",
  type: "pkcs8",
});

/** Whether the home pins this suite folder with its twinlock.yaml as it is now. */
function pinnedAsIs(home: GateHome, suite: string): boolean {
  const root = realpathSync(suite);
  const pin = listPins(home).find((p) => p.root === root);
  return pin !== undefined && pin.config_sha256 === configDigest(root);
}

/** Pin a suite in the test home (once per folder unless `again`), accepting unsigned suites. */
export async function pinForTest(suite: string, again = false, home: GateHome = testHome()): Promise<void> {
  const key = `${home.dir}\u0000${suite}`;
  if (pinned.has(key) && !again) return;
  // A home copied from the run's template (test/support/global-setup.ts) already pins the shared suites as they are.
  if (!again && pinnedAsIs(home, suite)) {
    pinned.add(key);
    return;
  }
  await pinSuite(home, { suiteDir: suite, allowUnsigned: true, key: TEST_PINNER });
  pinned.add(key);
}

/** The gate home a fixture run is recorded in. */
/** The folder run store of a test run's gate home. */
export function storeOf(g: GateRun): RunStore {
  return folderRunStore(homeOf(g));
}

export function homeOf(g: GateRun): GateHome {
  return openGateHome(g.home, { create: true });
}

/** The demo pair every run fixture uses. */
export const PLANNER = "MD-29";
export const EXECUTOR = "MD-30";

/** A temporary folder holding a run file, a handoff folder and (optionally) its own suite copy. */
export interface GateRun {
  dir: string;
  runFile: string;
  handoff: string;
  suite: string;
  /** The gate home the run is recorded in (the test file's home; a clone gets a copy of it). */
  home: string;
}

const made = new Set<string>();

/** A fresh temporary folder, removed by `removeGateRuns`. */
export function makeRunTempDir(prefix = "twinlock-run-"): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Remove every folder made by this module. */
export function removeGateRuns(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
}

/**
 * A new temporary folder with the demo handoff written into `handoff/`. The
 * run file is not created yet (see `startRun`). With `copySuite`, the example
 * suite is copied into the folder so a test may change its pairing.
 */
export function makeGateRun(options: { copySuite?: boolean; records?: HandoffRecords } = {}): GateRun {
  const dir = makeRunTempDir();
  const handoff = path.join(dir, "handoff");
  writeDemoHandoff(handoff, options.records ?? demoHandoffRecords());
  let suite = RUN_EXAMPLE_SUITE;
  if (options.copySuite) {
    suite = path.join(dir, "suite");
    cpSync(RUN_EXAMPLE_SUITE, suite, { recursive: true });
    renameSuiteId(suite);
  }
  return { dir, runFile: path.join(dir, "run.json"), handoff, suite, home: testHome().dir };
}

/** Copy a whole run folder (run file, handoff, suite copy) so each test can act on its own copy. */
export function cloneGateRun(g: GateRun): GateRun {
  const dir = makeRunTempDir();
  cpSync(g.dir, dir, { recursive: true });
  const moved = (p: string) => (p.startsWith(g.dir) ? path.join(dir, path.relative(g.dir, p)) : p);
  if (g.suite.startsWith(g.dir))
    throw new Error("a run with its own suite copy records the suite's absolute path; clone it by building it again");
  // A copy of the run is a fork the home would refuse; each clone gets its own copy of the home too.
  const home = makeRunTempDir("twinlock-home-copy-");
  cpSync(g.home, home, { recursive: true });
  return { dir, runFile: moved(g.runFile), handoff: moved(g.handoff), suite: g.suite, home };
}

export interface RunSettings {
  mode?: Mode;
  environment?: string;
  actions?: "all" | string[];
  budget?: number | null;
  planners?: string[];
  /** The change the run is for (`init-run --for-change`). */
  change?: string;
}

/** `init-run` through the library. */
export async function startRun(g: GateRun, s: RunSettings = {}): Promise<LoadedRun> {
  await pinForTest(g.suite, false, homeOf(g));
  return initRun({
    run: g.runFile,
    store: storeOf(g),
    suiteRoot: g.suite,
    planners: s.planners ?? [PLANNER],
    mode: s.mode ?? "APPLY_SAFE",
    environment: s.environment ?? "staging",
    actions: s.actions ?? "all",
    budget: s.budget ?? null,
    change: s.change,
    actor: "planner-agent",
  });
}

/** The workflow of `planner` as the verified run file says now. */
export function workflowOf(g: GateRun, planner = PLANNER): Workflow {
  const wf = readRun(g.runFile, homeOf(g)).state.workflows[planner];
  if (!wf) throw new Error(`no workflow ${planner}`);
  return wf;
}

/** The current frozen hash of `planner`'s handoff. */
export function frozenHash(g: GateRun, planner = PLANNER): string {
  const hash = workflowOf(g, planner).handoff?.hash;
  if (!hash) throw new Error(`${planner} is not frozen`);
  return hash;
}

/** A material edit of the handoff: one more line in the report, so the hash changes. */
export function editHandoff(g: GateRun, note = "edit"): void {
  const file = path.join(g.handoff, "report.md");
  writeFileSync(file, `${readFileSync(file, "utf8")}\n${note} ${Math.random()}\n`);
}

export async function freeze(
  g: GateRun,
  o: { planner?: string; unchangedBecause?: string; handoffHash?: string; handoff?: string; key?: KeyObject } = {},
) {
  return freezePairHandoff({
    run: g.runFile,
    store: storeOf(g),
    planner: o.planner ?? PLANNER,
    handoffDir: o.handoff ?? g.handoff,
    handoffHash: o.handoffHash,
    unchangedBecause: o.unchangedBecause,
    actor: "planner-agent",
    key: o.key,
  });
}

export async function review(g: GateRun, decision: ReviewDecision, o: { planner?: string; feedback?: string; handoffHash?: string } = {}) {
  const planner = o.planner ?? PLANNER;
  return reviewPairPlan({
    run: g.runFile,
    store: storeOf(g),
    planner,
    decision,
    feedback: o.feedback ?? (decision === "approved" ? undefined : "Add Windows coverage and rollback evidence"),
    handoffHash: o.handoffHash ?? frozenHash(g, planner),
    reviewer: "alice",
  });
}

export async function consent(g: GateRun, approve: boolean, o: { planner?: string; now?: () => Date; handoffHash?: string } = {}) {
  const planner = o.planner ?? PLANNER;
  return consentPairExecution({
    run: g.runFile,
    store: storeOf(g),
    planner,
    approve,
    handoffHash: o.handoffHash ?? frozenHash(g, planner),
    user: "alice",
    now: o.now,
  });
}

export async function approveApplyStep(g: GateRun, planner = PLANNER) {
  return approveApply({ run: g.runFile, store: storeOf(g), planner, approver: "bob" });
}

export async function admitStep(g: GateRun, o: { executor?: string; planner?: string; dry?: boolean; now?: () => Date } = {}) {
  return admit({
    run: g.runFile,
    store: storeOf(g),
    executor: o.executor ?? EXECUTOR,
    planner: o.planner,
    dry: o.dry,
    actor: "executor-agent",
    now: o.now,
  });
}

/**
 * Rest the workflow in `handoff_frozen`. The gate's freeze always moves on
 * to `plan_review_pending` in the same write, so this appends only the
 * freeze event through the store, exactly as freeze builds it.
 */
export async function freezeWithoutReviewRequest(g: GateRun, planner = PLANNER): Promise<void> {
  const digest = await snapshotHandoff(homeOf(g), g.handoff);
  await digest.keep();
  await digest.dispose();
  await updateRun(g.runFile, homeOf(g), (current) => {
    const wf = current.state.workflows[planner] as Workflow;
    const revision = wf.revision + 1;
    return {
      events: [
        {
          type: "handoff_frozen",
          actor: "planner-agent",
          data: {
            planner,
            revision,
            hash: digest.hash,
            dir: path.relative(path.dirname(g.runFile), g.handoff),
            files: digest.files,
            receipt: {
              kind: "freeze",
              run_id: current.state.run_id,
              planner,
              executor: wf.executor,
              by: "planner-agent",
              handoff_hash: digest.hash,
              revision,
              at: new Date().toISOString(),
            },
            unchanged_because: null,
          },
        },
      ],
      result: undefined,
    };
  });
}

/** Which way a scenario reaches `closed`. */
export type ClosedVia = "declined" | "consent_declined" | "verified" | "abandoned";

/**
 * Create the run (if needed) and drive `planner`'s workflow to `state` with
 * the real gate functions. `approval_pending` needs an APPLY_APPROVED run.
 */
export async function driveTo(g: GateRun, state: State, o: RunSettings & { closedVia?: ClosedVia; create?: boolean } = {}): Promise<void> {
  if (o.create !== false) await startRun(g, o);
  if (state === "investigating") return;
  if (state === "handoff_frozen") return freezeWithoutReviewRequest(g);
  await freeze(g);
  if (state === "plan_review_pending") return;
  if (state === "plan_revision_pending") {
    await review(g, "changes_requested");
    return;
  }
  if (state === "failed") {
    await closeWorkflow({
      run: g.runFile,
      store: storeOf(g),
      planner: PLANNER,
      result: "failed",
      residual: "the fix could not be planned",
      actor: "planner-agent",
    });
    return;
  }
  if (state === "closed" && (o.closedVia ?? "declined") === "declined") {
    await review(g, "declined", { feedback: "not worth the risk this quarter" });
    return;
  }
  if (state === "closed" && o.closedVia === "abandoned") {
    await closeWorkflow({
      run: g.runFile,
      store: storeOf(g),
      planner: PLANNER,
      result: "abandoned",
      residual: "superseded",
      actor: "planner-agent",
    });
    return;
  }
  await review(g, "approved");
  if (state === "execution_consent_pending") return;
  if (state === "closed" && o.closedVia === "consent_declined") {
    await consent(g, false);
    return;
  }
  await consent(g, true);
  if (state === "approval_pending") {
    if (o.mode !== "APPLY_APPROVED") throw new Error("approval_pending needs an APPLY_APPROVED run");
    return;
  }
  if (o.mode === "APPLY_APPROVED") await approveApplyStep(g);
  if (state === "dry_run_ready") return;
  const r = await admitStep(g);
  if (!r.admitted) throw new Error(`fixture admission failed: ${JSON.stringify(r.checks.filter((c) => !c.ok))}`);
  if (state === "executing") return;
  if (state === "closed") {
    // Verified is a person's call on the executed change: the demo plan's change, every action done and criterion passed.
    await closeWorkflow({
      run: g.runFile,
      store: storeOf(g),
      planner: PLANNER,
      result: "verified",
      residual: "none",
      actor: "alice",
      executed: conformingChange(g),
    });
    return;
  }
  throw new Error(`driveTo cannot reach ${state}`);
}

/**
 * The executor's change that conforms to the demo plan (A1's test and A2's
 * cart/cache.go written under `g.dir/checkout`, each criterion passed), as
 * `closeWorkflow` records it: what a verified close is judged by. The
 * revised demo plan (reviseDemoHandoff) has V3 too: pass its criteria.
 */
export function conformingChange(
  g: Pick<GateRun, "dir">,
  criteria: readonly string[] = ["V1", "V2"],
): {
  changed: Array<{ path: string; sha256: string | null }>;
  criteria: Array<{ id: string; result: "passed"; command: string }>;
  root: string;
} {
  const root = path.join(g.dir, "checkout");
  const files: Record<string, string> = {
    "cart/cache_race_test.go": "package cart\n\n// TestCartCacheRace\n",
    "cart/cache.go": "package cart\n\n// UpdatePrice holds cartCache.mu\n",
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return {
    changed: Object.entries(files).map(([rel, text]) => ({
      path: rel,
      sha256: `sha256:${createHash("sha256").update(text).digest("hex")}`,
    })),
    criteria: criteria.map((id) => ({ id, result: "passed", command: `go test ./cart/... # ${id}` })),
    root,
  };
}

/**
 * Close an executing workflow verified with no execution record, the way
 * runs were closed before a verified close needed the change: the event
 * written as it was then, for the tests that older runs still replay.
 */
export async function closeVerifiedAsOlderRuns(g: GateRun): Promise<void> {
  await storeOf(g).update(g.runFile, () => ({
    events: [{ type: "closed", actor: "executor-agent", data: { planner: PLANNER, outcome: "verified", residual: "none" } }],
    result: undefined,
  }));
}

/** Every file under `dir` with its bytes, keyed by POSIX relative path: compare two to prove nothing changed. */
export function snapshotTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(child);
      else out.set(child, readFileSync(path.join(dir, child)).toString("base64"));
    }
  };
  walk("");
  return out;
}

/** The run file's exact bytes. */
export function runBytes(g: GateRun): Buffer {
  return readFileSync(g.runFile);
}

/** Rewrite the run file as JSON after `edit` (a hand edit: the chain is not rebuilt). */
export function handEditRun(g: GateRun, edit: (json: RunFile) => void): void {
  const json = JSON.parse(readFileSync(g.runFile, "utf8")) as RunFile;
  edit(json);
  writeFileSync(g.runFile, `${JSON.stringify(json, null, 1)}\n`);
}

/** Change one prompt file of a suite copy: `edit` gets and returns its text. */
export function editPrompt(suite: string, rel: string, edit: (text: string) => string): void {
  const file = path.join(suite, rel);
  writeFileSync(file, edit(readFileSync(file, "utf8")));
}

/** Add a prompt file to a suite copy. */
export function addPrompt(suite: string, rel: string, text: string): void {
  const file = path.join(suite, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}
