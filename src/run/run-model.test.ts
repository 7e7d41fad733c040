import { folderRunStore } from "../home/folder-run-store.js";
/**
 * A model-based test of a whole run (issues 3 and 4): random sequences of the
 * gate's operations, handoff edits, hand edits of the run file and changes to
 * the suite's pairing, checked step by step against a small model written
 * from SPEC §5 (not from the transition table). The key property: `executing`
 * is reached if and only if the model says the current frozen revision was
 * approved and consented for MD-30 and nothing changed since.
 */

import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoHandoffRecords, reviseDemoHandoff, writeDemoHandoff } from "../demo/demo-handoff.js";
import { IntegrityError, RefusalError, UsageError } from "../errors/errors.js";
import { admit } from "../gate/admit.js";
import { approveApply } from "../gate/approve-apply.js";
import { type CloseResult, closeWorkflow } from "../gate/close-workflow.js";
import { consentPairExecution } from "../gate/consent-pair-execution.js";
import { freezePairHandoff } from "../gate/freeze-pair-handoff.js";
import { raiseStop, resolveStop } from "../gate/hard-stops.js";
import { initRun } from "../gate/init-run.js";
import { type ReviewDecision, reviewPairPlan } from "../gate/review-pair-plan.js";
import { checkReadiness } from "../handoff/check-readiness.js";
import { hashHandoff } from "../handoff/hash-handoff.js";
import { readRunFile } from "../store/run-file.js";
import { conformingChange, pinForTest, testHome } from "../test-support/run-fixture.js";
import { makeTempDir, removeTempDirs, renameSuiteId, unsignedExampleSuite } from "../test-support/temp-suite.js";
import { GENESIS, hashEvent } from "./event-chain.js";
import type { RunEvent, RunFile } from "./run-schema.js";

const PLANNER = "MD-29";
const EXECUTOR = "MD-30";
const EXECUTOR_FILE = "debugging/md-30-debugging-executor.md";
const NUM_RUNS = Number(process.env.MODEL_RUNS ?? 10);

type Mode = "APPLY_SAFE" | "APPLY_APPROVED";
type ModelState =
  | "investigating"
  | "plan_review_pending"
  | "plan_revision_pending"
  | "execution_consent_pending"
  | "approval_pending"
  | "dry_run_ready"
  | "executing"
  | "closed"
  | "failed";

// ── The handoff: a few fixed versions of its files, so a hash can come back after an edit is undone.

/** 0 as first written; 1 revised records; 2 a changed report; 3 an added file; 4 not ready (a dangling citation). */
const VARIANTS = [0, 1, 2, 3, 4] as const;
type Variant = (typeof VARIANTS)[number];
const NOT_READY: Variant = 4;

function writeVariant(dir: string, v: Variant): void {
  rmSync(dir, { recursive: true, force: true });
  const records = v === 1 ? reviseDemoHandoff(demoHandoffRecords()) : demoHandoffRecords();
  if (v === 4) records.findings.findings[0]?.evidence.push("E99");
  writeDemoHandoff(dir, records);
  if (v === 2)
    writeFileSync(path.join(dir, "report.md"), "# Flaky checkout_total_test\n\nRoot cause: a data race (see #FINDING:F1). Edited.\n");
  if (v === 3) writeFileSync(path.join(dir, "notes.txt"), "an extra file is part of the handoff too\n");
}

const variantHash = new Map<Variant, string>();

beforeAll(async () => {
  for (const v of VARIANTS) {
    const dir = path.join(makeTempDir("twinlock-model-variant-"), "handoff");
    writeVariant(dir, v);
    expect(checkReadiness(dir).ready, `variant ${v} readiness`).toBe(v !== NOT_READY);
    variantHash.set(v, (await hashHandoff(dir)).hash);
  }
  expect(new Set(variantHash.values()).size).toBe(VARIANTS.length);
});
afterAll(removeTempDirs);

// ── The model.

interface Model {
  mode: Mode;
  state: ModelState;
  revision: number;
  /** The hash frozen at each revision (index revision-1). */
  hashes: string[];
  /** The handoff folder's version now, and the one frozen last. */
  variant: Variant;
  frozenVariant: Variant | null;
  /** Facts about the current revision; a re-freeze voids them all. */
  approved: boolean;
  consented: boolean;
  consentUsed: boolean;
  applyApproved: boolean;
  /** Unresolved stops in the order raised, as "reason@workflow" ("run" for the whole run); the same one may stand twice. */
  stops: string[];
  /** MD-30's title was changed in the suite copy. */
  pairingChanged: boolean;
  /** The run file's bytes after a hand edit; nothing may change them afterwards. */
  corrupted: Buffer | null;
}

interface Real {
  dir: string;
  runFile: string;
  handoff: string;
  suite: string;
}

const currentHash = (m: Model) => (m.revision > 0 ? (m.hashes[m.revision - 1] as string) : null);
const isFinal = (s: ModelState) => s === "closed" || s === "failed";

/** SPEC §5 and issue 4: all the conditions under which admission lets MD-30 start. */
function admissible(m: Model, executor: string): boolean {
  return (
    m.corrupted === null &&
    executor === EXECUTOR &&
    m.state === "dry_run_ready" &&
    m.approved &&
    m.consented &&
    !m.consentUsed &&
    (m.mode !== "APPLY_APPROVED" || m.applyApproved) &&
    m.variant === m.frozenVariant &&
    m.stops.length === 0 &&
    !m.pairingChanged
  );
}

/** Check the real run file against the model after a step. */
function compare(m: Model, r: Real): void {
  if (m.corrupted) {
    expect(readFileSync(r.runFile).equals(m.corrupted), "a command changed a hand-edited run file").toBe(true);
    return;
  }
  const run = readRunFile(r.runFile);
  const wf = run.state.workflows[PLANNER];
  expect(wf?.state).toBe(m.state);
  expect(wf?.revision).toBe(m.revision);
  expect(wf?.handoff?.hash ?? null).toBe(currentHash(m));
  expect(run.state.authorized_execution_prompt_ids).toEqual(m.consented && !isFinal(m.state) ? [EXECUTOR] : []);
  const open = run.state.stops.filter((s) => s.resolved_at === null).map((s) => `${s.reason}@${s.workflow ?? "run"}`);
  expect(open).toEqual(m.stops);
}

/**
 * Run a real operation whose legality the model decided: when legal it must
 * succeed; when not, it must throw the right kind of error and change nothing.
 */
async function expectOutcome(m: Model, r: Real, legal: boolean, op: () => Promise<unknown>): Promise<boolean> {
  const before = readFileSync(r.runFile);
  let error: unknown;
  try {
    await op();
  } catch (e) {
    error = e;
  }
  if (m.corrupted) {
    expect(error, "a command on a hand-edited run file must refuse").toBeDefined();
    expect(error instanceof IntegrityError || error instanceof UsageError, `got ${String(error)}`).toBe(true);
  } else if (legal) {
    expect(error, `expected success, got ${String(error)}`).toBeUndefined();
  } else {
    expect(error, "expected a refusal").toBeDefined();
    expect(error instanceof RefusalError || error instanceof UsageError, `expected a refusal, got ${String(error)}`).toBe(true);
  }
  if (error !== undefined) expect(readFileSync(r.runFile).equals(before), "a refused command changed the run file").toBe(true);
  return error === undefined;
}

/** Void what the previous revision earned: a re-freeze makes a new version to review and consent to. */
function refrozen(m: Model): void {
  m.revision += 1;
  m.hashes.push(variantHash.get(m.variant) as string);
  m.frozenVariant = m.variant;
  m.approved = m.consented = m.consentUsed = m.applyApproved = false;
  m.state = "plan_review_pending";
}

// ── Commands.

type HashChoice = "current" | "stale" | "none";

/** The hash a caller passes: the current one, an older revision's (or one never frozen), or none. */
function pickHash(m: Model, choice: HashChoice, k: number): string | undefined {
  if (choice === "none") return undefined;
  if (choice === "current") return currentHash(m) ?? `sha256:${"c".repeat(64)}`;
  const older = m.hashes.slice(0, -1);
  return older.length > 0 ? (older[k % older.length] as string) : `sha256:${"e".repeat(64)}`;
}

abstract class Step implements fc.AsyncCommand<Model, Real> {
  check(_m: Readonly<Model>): boolean {
    return true;
  }
  abstract act(m: Model, r: Real): Promise<void>;
  async run(m: Model, r: Real): Promise<void> {
    await this.act(m, r);
    compare(m, r);
  }
  abstract toString(): string;
}

class Freeze extends Step {
  constructor(readonly unchangedBecause: boolean) {
    super();
  }
  async act(m: Model, r: Real) {
    const freezable: ModelState[] = [
      "investigating",
      "plan_revision_pending",
      "plan_review_pending",
      "execution_consent_pending",
      "approval_pending",
      "dry_run_ready",
    ];
    const same = m.revision > 0 && variantHash.get(m.variant) === currentHash(m);
    const legal =
      freezable.includes(m.state) &&
      m.variant !== NOT_READY &&
      !m.pairingChanged &&
      !(same && (m.state !== "plan_revision_pending" || !this.unchangedBecause));
    const ok = await expectOutcome(m, r, legal, () =>
      freezePairHandoff({
        store: folderRunStore(testHome()),
        run: r.runFile,
        planner: PLANNER,
        handoffDir: r.handoff,
        unchangedBecause: this.unchangedBecause ? "the reviewer's concern is already covered by E2" : undefined,
        actor: "planner-agent",
      }),
    );
    if (ok && !m.corrupted) refrozen(m);
  }
  toString() {
    return `freeze(${this.unchangedBecause ? "--unchanged-because" : ""})`;
  }
}

class Review extends Step {
  constructor(
    readonly decision: ReviewDecision,
    readonly hash: HashChoice,
    readonly k: number,
  ) {
    super();
  }
  async act(m: Model, r: Real) {
    const given = pickHash(m, this.hash, this.k);
    const hashOk = given === undefined ? this.decision !== "approved" : given === currentHash(m);
    // Every decision is taken under the pinned suite: a changed pairing is refused until a new run.
    const legal = m.state === "plan_review_pending" && hashOk && !m.pairingChanged;
    const ok = await expectOutcome(m, r, legal, () =>
      reviewPairPlan({
        store: folderRunStore(testHome()),
        run: r.runFile,
        planner: PLANNER,
        decision: this.decision,
        feedback: this.decision === "approved" ? undefined : "Add Windows coverage and rollback evidence",
        handoffHash: given,
        reviewer: "alice",
      }),
    );
    if (!ok || m.corrupted) return;
    if (this.decision === "changes_requested") m.state = "plan_revision_pending";
    if (this.decision === "declined") m.state = "closed";
    if (this.decision === "approved") {
      m.state = "execution_consent_pending";
      m.approved = true;
    }
  }
  toString() {
    return `review(${this.decision}, ${this.hash})`;
  }
}

class Consent extends Step {
  constructor(
    readonly approve: boolean,
    readonly hash: HashChoice,
    readonly k: number,
  ) {
    super();
  }
  async act(m: Model, r: Real) {
    const given = pickHash(m, this.hash, this.k);
    const hashOk = given === undefined ? !this.approve : given === currentHash(m);
    const legal = m.state === "execution_consent_pending" && m.approved && hashOk && !m.pairingChanged;
    const ok = await expectOutcome(m, r, legal, () =>
      consentPairExecution({
        store: folderRunStore(testHome()),
        run: r.runFile,
        planner: PLANNER,
        approve: this.approve,
        handoffHash: given,
        user: "carol",
      }),
    );
    if (!ok || m.corrupted) return;
    if (!this.approve) m.state = "closed";
    else {
      m.consented = true;
      m.state = m.mode === "APPLY_APPROVED" ? "approval_pending" : "dry_run_ready";
    }
  }
  toString() {
    return `consent(${this.approve ? "approve" : "decline"}, ${this.hash})`;
  }
}

class ApproveApply extends Step {
  async act(m: Model, r: Real) {
    const legal = m.state === "approval_pending" && m.consented && !m.pairingChanged;
    const ok = await expectOutcome(m, r, legal, () =>
      approveApply({ store: folderRunStore(testHome()), run: r.runFile, planner: PLANNER, approver: "bob" }),
    );
    if (!ok || m.corrupted) return;
    m.applyApproved = true;
    m.state = "dry_run_ready";
  }
  toString() {
    return "approve-apply";
  }
}

class Admit extends Step {
  constructor(
    readonly executor: string,
    readonly dry: boolean,
  ) {
    super();
  }
  async act(m: Model, r: Real) {
    const before = readFileSync(r.runFile);
    const expected = admissible(m, this.executor);
    let admitted = false;
    try {
      const result = await admit({
        store: folderRunStore(testHome()),
        run: r.runFile,
        executor: this.executor,
        dry: this.dry,
        actor: "executor-agent",
      });
      admitted = result.admitted;
      if (!result.admitted) expect(result.checks.some((c) => !c.ok)).toBe(true);
    } catch (error) {
      // Only a run file that is not even JSON stops admission with an error instead of a report.
      expect(m.corrupted !== null && error instanceof UsageError, `admission threw ${String(error)}`).toBe(true);
    }
    expect(admitted, `admission of ${this.executor} in ${m.state}`).toBe(expected);
    if (!admitted || this.dry) expect(readFileSync(r.runFile).equals(before), "a refused or dry admission changed the run file").toBe(true);
    if (admitted && !this.dry) {
      m.state = "executing";
      m.consentUsed = true;
    }
  }
  toString() {
    return `admit(${this.executor}${this.dry ? ", --dry" : ""})`;
  }
}

class Stop extends Step {
  constructor(
    readonly reason: string,
    readonly onWorkflow: boolean,
  ) {
    super();
  }
  async act(m: Model, r: Real) {
    const ok = await expectOutcome(m, r, true, () =>
      raiseStop({
        store: folderRunStore(testHome()),
        run: r.runFile,
        reason: this.reason,
        workflow: this.onWorkflow ? PLANNER : undefined,
        actor: "ops",
      }),
    );
    if (ok && !m.corrupted) m.stops.push(`${this.reason}@${this.onWorkflow ? PLANNER : "run"}`);
  }
  toString() {
    return `stop(${this.reason}${this.onWorkflow ? `, ${PLANNER}` : ""})`;
  }
}

class ResolveStop extends Step {
  constructor(readonly reason: string) {
    super();
  }
  async act(m: Model, r: Real) {
    // Without naming a stop, a lift takes the one standing stop of its reason, and refuses to choose among several.
    const open = m.stops.filter((s) => s.startsWith(`${this.reason}@`));
    const ok = await expectOutcome(m, r, open.length === 1, () =>
      resolveStop({ store: folderRunStore(testHome()), run: r.runFile, reason: this.reason, note: "cleared", actor: "ops" }),
    );
    if (ok && !m.corrupted) m.stops.splice(m.stops.indexOf(open[0] as string), 1);
  }
  toString() {
    return `resolve-stop(${this.reason})`;
  }
}

class Close extends Step {
  constructor(
    readonly result: CloseResult,
    readonly residual: boolean,
  ) {
    super();
  }
  async act(m: Model, r: Real) {
    const executing = m.state === "executing";
    // "verified" is refused while any stop holds the pair (its own, or one on the whole run).
    const legal =
      !isFinal(m.state) &&
      (executing
        ? this.result !== "abandoned" && !(this.result === "verified" && m.stops.length > 0)
        : (this.result === "failed" || this.result === "abandoned") && this.residual);
    const ok = await expectOutcome(m, r, legal, () =>
      closeWorkflow({
        store: folderRunStore(testHome()),
        run: r.runFile,
        planner: PLANNER,
        result: this.result,
        residual: this.residual ? "left for the next run" : undefined,
        actor: "executor-agent",
        // A verified close is judged by the change: the one that conforms to the frozen plan (the revision adds V3).
        executed:
          this.result === "verified" && executing
            ? conformingChange(r, m.frozenVariant === 1 ? ["V1", "V2", "V3"] : ["V1", "V2"])
            : undefined,
      }),
    );
    if (ok && !m.corrupted) m.state = !executing && this.result === "failed" ? "failed" : "closed";
  }
  toString() {
    return `close(${this.result}${this.residual ? ", --residual" : ""})`;
  }
}

class EditHandoff extends Step {
  constructor(readonly variant: Variant) {
    super();
  }
  async act(m: Model, r: Real) {
    writeVariant(r.handoff, this.variant);
    m.variant = this.variant;
  }
  toString() {
    return `edit-handoff(${this.variant})`;
  }
}

class TogglePairing extends Step {
  async act(m: Model, r: Real) {
    const file = path.join(r.suite, EXECUTOR_FILE);
    const text = readFileSync(file, "utf8");
    const [from, to] = m.pairingChanged
      ? ["title: Debugging fix executor (renamed)\n", "title: Debugging fix executor\n"]
      : ["title: Debugging fix executor\n", "title: Debugging fix executor (renamed)\n"];
    expect(text).toContain(from);
    writeFileSync(file, text.replace(from, to));
    m.pairingChanged = !m.pairingChanged;
  }
  toString() {
    return "toggle MD-30's title in the suite";
  }
}

const HAND_EDITS = ["state", "authorize", "receipt", "last-actor", "drop-last", "truncate", "forge-admission"] as const;
type HandEditKind = (typeof HAND_EDITS)[number];

class HandEdit extends Step {
  constructor(readonly kind: HandEditKind) {
    super();
  }
  override check(m: Readonly<Model>) {
    return m.corrupted === null;
  }
  async act(m: Model, r: Real) {
    const text = readFileSync(r.runFile, "utf8");
    const json = JSON.parse(text) as RunFile;
    const wf = json.state.workflows[PLANNER] as RunFile["state"]["workflows"][string];
    let out: string;
    switch (this.kind) {
      case "state":
        wf.state = wf.state === "executing" ? "dry_run_ready" : "executing";
        break;
      case "authorize":
        json.state.authorized_execution_prompt_ids.push("MD-28");
        break;
      case "receipt": {
        // The same edit in the event and in the state's copy of the receipt.
        const i = json.events.findIndex((e) => e.type === "plan_approved" || e.type === "changes_requested");
        if (i < 0) {
          json.state.authorized_execution_prompt_ids.push(EXECUTOR);
          break;
        }
        const receipt = (json.events[i] as RunEvent).data.receipt as { reviewer: string; at: string };
        const stored = wf.reviews.find((x) => x.at === receipt.at && x.reviewer === receipt.reviewer);
        receipt.reviewer = "mallory";
        if (stored) stored.reviewer = "mallory";
        break;
      }
      case "last-actor":
        (json.events[json.events.length - 1] as RunEvent).actor = "mallory";
        break;
      case "drop-last":
        if (json.events.length > 1) {
          json.events.pop();
          json.revision = json.events.length;
        } else json.head = `sha256:${"0".repeat(63)}1`;
        break;
      case "truncate":
        break;
      case "forge-admission": {
        // Rebuild the chain after appending an admission straight away: replay must refuse it.
        const forged: RunEvent = {
          seq: json.events.length + 1,
          at: new Date().toISOString(),
          actor: "mallory",
          type: "admitted",
          data: { planner: PLANNER, receipt: { kind: "admission" } },
          prev: json.head,
        };
        json.events.push(forged);
        let prev = GENESIS;
        for (const e of json.events) {
          e.prev = prev;
          prev = hashEvent(e);
        }
        json.head = prev;
        json.revision = json.events.length;
        wf.state = "executing";
        if (!json.state.authorized_execution_prompt_ids.includes(EXECUTOR)) json.state.authorized_execution_prompt_ids.push(EXECUTOR);
        break;
      }
    }
    out = this.kind === "truncate" ? text.slice(0, Math.floor(text.length / 2)) : `${JSON.stringify(json, null, 1)}\n`;
    if (out === text) out = `${text.trimEnd()} `;
    writeFileSync(r.runFile, out);
    m.corrupted = readFileSync(r.runFile);
    // The edit is caught before anything acts on the file.
    expect(() => readRunFile(r.runFile)).toThrow(this.kind === "truncate" ? UsageError : IntegrityError);
  }
  toString() {
    return `hand-edit(${this.kind})`;
  }
}

// ── Arbitraries, weighted so that sequences go deep before a terminal step or a hand edit ends them.

const hashChoice = fc.constantFrom<HashChoice>("current", "current", "current", "current", "stale", "none");
const step = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(false, false, false, true).map((u) => new Freeze(u)) },
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        fc.constantFrom<ReviewDecision>("changes_requested", "changes_requested", "approved", "approved", "approved"),
        hashChoice,
        fc.nat(),
      )
      .map(([d, h, k]) => new Review(d, h, k)),
  },
  { weight: 1, arbitrary: fc.tuple(hashChoice, fc.nat()).map(([h, k]) => new Review("declined", h, k)) },
  { weight: 6, arbitrary: fc.tuple(hashChoice, fc.nat()).map(([h, k]) => new Consent(true, h, k)) },
  { weight: 1, arbitrary: fc.tuple(hashChoice, fc.nat()).map(([h, k]) => new Consent(false, h, k)) },
  { weight: 4, arbitrary: fc.constant(new ApproveApply()) },
  {
    weight: 8,
    arbitrary: fc
      .tuple(fc.constantFrom(EXECUTOR, EXECUTOR, EXECUTOR, "MD-28"), fc.constantFrom(false, false, true))
      .map(([e, d]) => new Admit(e, d)),
  },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom("db-freeze", "on-call"), fc.boolean()).map(([reason, wf]) => new Stop(reason, wf)) },
  { weight: 3, arbitrary: fc.constantFrom("db-freeze", "on-call").map((reason) => new ResolveStop(reason)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom<CloseResult>("verified", "failed", "rolled_back", "abandoned"), fc.boolean())
      .map(([res, residual]) => new Close(res, residual)),
  },
  { weight: 6, arbitrary: fc.constantFrom(...VARIANTS).map((v) => new EditHandoff(v)) },
  { weight: 2, arbitrary: fc.constant(new TogglePairing()) },
  { weight: 1, arbitrary: fc.constantFrom(...HAND_EDITS).map((k) => new HandEdit(k)) },
);

/** The shortest road to `executing`; each sequence starts with a random part of it, so admission is reached often. */
const HAPPY_PATH: Step[] = [
  new Freeze(false),
  new Review("approved", "current", 0),
  new Consent(true, "current", 0),
  new ApproveApply(),
  new Admit(EXECUTOR, false),
];

async function setUp(mode: Mode): Promise<{ model: Model; real: Real }> {
  const dir = makeTempDir("twinlock-model-");
  const suite = path.join(dir, "suite");
  cpSync(unsignedExampleSuite(), suite, { recursive: true });
  renameSuiteId(suite);
  await pinForTest(suite);
  const real: Real = { dir, suite, runFile: path.join(dir, "run.json"), handoff: path.join(dir, "handoff") };
  writeVariant(real.handoff, 0);
  await initRun({
    store: folderRunStore(testHome()),
    run: real.runFile,
    suiteRoot: suite,
    planners: [PLANNER],
    mode,
    environment: "staging",
    actor: "planner-agent",
  });
  const model: Model = {
    mode,
    state: "investigating",
    revision: 0,
    hashes: [],
    variant: 0,
    frozenVariant: null,
    approved: false,
    consented: false,
    consentUsed: false,
    applyApproved: false,
    stops: [],
    pairingChanged: false,
    corrupted: null,
  };
  return { model, real };
}

describe("a run driven by random sequences of the gate's operations", () => {
  it(
    "matches the model after every step, and reaches executing exactly when the model allows it",
    async () => {
      let executingRuns = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom<Mode>("APPLY_SAFE", "APPLY_APPROVED"),
          fc.integer({ min: 0, max: HAPPY_PATH.length }),
          fc.commands([step], { maxCommands: 50, size: "max" }),
          async (mode, prefix, cmds) => {
            const { model, real } = await setUp(mode);
            for (const s of HAPPY_PATH.slice(0, prefix)) await s.run(model, real);
            await fc.asyncModelRun(() => ({ model, real }), cmds);
            if (reachedExecuting(real)) executingRuns++;
          },
        ),
        { numRuns: NUM_RUNS },
      );
      // The property is not vacuous: some sequences did reach executing.
      expect(executingRuns).toBeGreaterThan(0);
      // A few seconds a run on a loaded 2-core machine: the soak's 100 runs take minutes there.
    },
    60_000 + NUM_RUNS * 6_000,
  );
});

function reachedExecuting(r: Real): boolean {
  try {
    return (JSON.parse(readFileSync(r.runFile, "utf8")) as RunFile).events.some((e) => e.type === "admitted");
  } catch {
    return false;
  }
}
