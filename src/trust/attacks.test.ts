/**
 * Attacks on the trust layer (issue 5). Each test plays an agent (or a
 * careless person) trying to reach `executing` without the decisions the
 * gate requires, on a real copy of the example suite with
 * `require_signed_receipts: true` and real Ed25519 reviewer keys. Every
 * attack must be refused with a reason that names it, and no run may ever
 * reach `executing`.
 */
import { createHash, createPrivateKey, type KeyObject, sign } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { demoHandoffRecords, writeDemoHandoff } from "../demo/demo-handoff.js";
import { RefusalError } from "../errors/errors.js";
import { type AdmitResult, admit } from "../gate/admit.js";
import { consentPairExecution } from "../gate/consent-pair-execution.js";
import { freezePairHandoff } from "../gate/freeze-pair-handoff.js";
import { initRun } from "../gate/init-run.js";
import { reviewPairPlan } from "../gate/review-pair-plan.js";
import { folderRunStore } from "../home/folder-run-store.js";
import { type GateHome, openGateHome } from "../home/gate-home.js";
import { writeCheckpoint } from "../home/run-checkpoints.js";
import { readRun } from "../home/run-ledger.js";
import { pinSuite } from "../home/suite-pins.js";
import { ADMISSION_STOP } from "../run/admission-checks.js";
import { replayEvents } from "../run/apply-event.js";
import { GENESIS, hashEvent } from "../run/event-chain.js";
import type { ConsentReceipt, ReviewReceipt, RunEvent, RunFile, RunState, Workflow } from "../run/run-schema.js";
import { configDigest } from "../test-support/config-digest.js";
import { runCli, STACK_FRAME } from "../test-support/run-cli.js";
import { judgeReceiptTrust } from "./judge-receipt-trust.js";
import { generateReviewerKey } from "./keys.js";
import { signReceipt, verifyReceiptSignature } from "./sign-receipt.js";

const EXAMPLE_SUITE = fileURLToPath(new URL("../../examples/suite", import.meta.url));
const PLANNER = "MD-29";
const EXECUTOR = "MD-30";
const OTHER_PLANNER = "MD-27";

/**
 * The people of every world: alice and bob may review, consent and apply;
 * carol may only review; mallory is listed but her key is revoked; eve's key
 * is listed nowhere (an attacker's own key).
 */
const PEOPLE = {
  alice: ["review", "consent", "apply", "stop", "freeze"],
  bob: ["review", "consent", "apply"],
  carol: ["review"],
  mallory: ["review", "consent", "apply"],
  eve: null,
  planner: ["freeze"],
} as const;
type Name = keyof typeof PEOPLE;

interface Person {
  file: string;
  publicKey: string;
  key: KeyObject;
}

/** A temporary folder with its own suite copy (signed receipts required), keys, a handoff and a run file path. */
interface World {
  dir: string;
  suite: string;
  runFile: string;
  handoff: string;
  people: Record<Name, Person>;
  /** The person's gate home: the pin, checkpoints, consumed consents and frozen bytes. */
  home: GateHome;
}

const dirs: string[] = [];
let savedEnv: Record<string, string | undefined> = {};

beforeAll(() => {
  // The CLI reads these; an ambient value must not sign or name anything here.
  savedEnv = { TWINLOCK_KEY: process.env.TWINLOCK_KEY, TWINLOCK_ACTOR: process.env.TWINLOCK_ACTOR };
  delete process.env.TWINLOCK_KEY;
  delete process.env.TWINLOCK_ACTOR;
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const [k, v] of Object.entries(savedEnv)) if (v !== undefined) process.env[k] = v;
});

/** Edit the world's twinlock.yaml with the yaml package, keeping its comments. */
function editConfig(w: World, edit: (doc: ReturnType<typeof parseDocument>) => void): void {
  const file = path.join(w.suite, "twinlock.yaml");
  const doc = parseDocument(readFileSync(file, "utf8"));
  edit(doc);
  writeFileSync(file, doc.toString());
}

function makeWorld(policies: Record<string, unknown> = {}): World {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-attack-"));
  dirs.push(dir);
  const suite = path.join(dir, "suite");
  cpSync(EXAMPLE_SUITE, suite, { recursive: true });
  const keyDir = path.join(dir, "keys");
  mkdirSync(keyDir, { mode: 0o700 });
  const people = {} as Record<Name, Person>;
  for (const name of Object.keys(PEOPLE) as Name[]) {
    const { privatePem, publicKey } = generateReviewerKey();
    const file = path.join(keyDir, `${name}.key`);
    writeFileSync(file, privatePem, { mode: 0o600 });
    people[name] = { file, publicKey, key: createPrivateKey(privatePem) };
  }
  const handoff = path.join(dir, "handoff");
  writeDemoHandoff(handoff, demoHandoffRecords());
  const home = openGateHome(path.join(dir, "home"), { create: true });
  const w: World = { dir, suite, runFile: path.join(dir, "run.json"), handoff, people, home };
  editConfig(w, (doc) => {
    doc.set(
      "reviewers",
      (Object.entries(PEOPLE) as Array<[Name, readonly string[] | null]>)
        .filter(([, rights]) => rights !== null)
        .map(([name, rights]) => ({ name, public_key: people[name].publicKey, rights: [...(rights ?? [])] })),
    );
    doc.set("suite_id", `attack-${path.basename(dir)}`);
    doc.set("revoked", [people.mallory.publicKey]);
    const all = { require_signed_receipts: true, consent_expiry: "4h", separate_duties: false, ...policies };
    for (const [k, v] of Object.entries(all)) doc.setIn(["policies", k], v);
  });
  return w;
}

/** What a genuine receipt of this world binds: the pinned policy and the executor's file, as they are now. */
function bound(w: World): { policy_digest: string; executor_digest: string } {
  const file = readFileSync(path.join(w.suite, "debugging", "md-30-debugging-executor.md"));
  return { policy_digest: configDigest(w.suite), executor_digest: `sha256:${createHash("sha256").update(file).digest("hex")}` };
}

/** The same world with another run file (another run of the same suite and handoff). */
const otherRun = (w: World, name: string): World => ({ ...w, runFile: path.join(w.dir, name) });

/** The person pins the world's suite as it is now (after the world's policy edits). */
async function pin(w: World): Promise<void> {
  await pinSuite(w.home, { suiteDir: w.suite, key: w.people.alice.key, allowUnsigned: true });
}

async function start(w: World, planners = [PLANNER]): Promise<void> {
  await pin(w);
  await initRun({
    run: w.runFile,
    store: folderRunStore(w.home),
    suiteRoot: w.suite,
    planners,
    mode: "APPLY_SAFE",
    environment: "staging",
    actor: "planner-agent",
  });
}

async function freeze(w: World, o: { as?: Name; planner?: string; handoff?: string } = {}) {
  return freezePairHandoff({
    run: w.runFile,
    store: folderRunStore(w.home),
    planner: o.planner ?? PLANNER,
    handoffDir: o.handoff ?? w.handoff,
    key: w.people[o.as ?? "planner"].key,
  });
}

function workflow(w: World, planner = PLANNER): Workflow {
  const wf = readRun(w.runFile, w.home).state.workflows[planner];
  if (!wf) throw new Error(`no workflow ${planner}`);
  return wf;
}

const hashOf = (w: World, planner = PLANNER): string => workflow(w, planner).handoff?.hash ?? "";

async function approve(w: World, who: Name, o: { planner?: string; feedback?: string; now?: () => Date } = {}) {
  return reviewPairPlan({
    run: w.runFile,
    store: folderRunStore(w.home),
    planner: o.planner ?? PLANNER,
    decision: "approved",
    feedback: o.feedback,
    handoffHash: hashOf(w, o.planner),
    key: w.people[who].key,
    now: o.now,
  });
}

async function consent(w: World, who: Name, o: { planner?: string; now?: () => Date } = {}) {
  return consentPairExecution({
    run: w.runFile,
    store: folderRunStore(w.home),
    planner: o.planner ?? PLANNER,
    approve: true,
    handoffHash: hashOf(w, o.planner),
    key: w.people[who].key,
    now: o.now,
  });
}

/** Drive the world's run to `dry_run_ready` with genuine, signed decisions by alice. */
async function toDryRunReady(w: World): Promise<void> {
  await start(w);
  await freeze(w);
  await approve(w, "alice");
  await consent(w, "alice");
}

/** Await `p` and check it was refused (RefusalError) with `reason`, writing nothing to the run file. */
async function expectRefused(w: World, p: () => Promise<unknown>, reason: RegExp, attack?: string): Promise<RefusalError> {
  const before = readFileSync(w.runFile);
  const error = await p().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "the attempt must be refused").toBeInstanceOf(RefusalError);
  const refusal = error as RefusalError;
  expect(refusal.message).toMatch(reason);
  if (attack !== undefined) expect(refusal.details.attack).toBe(attack);
  expect(readFileSync(w.runFile).equals(before), "a refusal writes nothing").toBe(true);
  return refusal;
}

/** No run file of the world holds an admission or a workflow in `executing`. */
function expectNeverExecuting(...files: string[]): void {
  for (const file of files) {
    const raw = JSON.parse(readFileSync(file, "utf8")) as RunFile;
    expect(
      raw.events.map((e) => e.type),
      `${path.basename(file)} records no admission`,
    ).not.toContain("admitted");
    for (const wf of Object.values(raw.state.workflows)) expect(wf.state).not.toBe("executing");
  }
}

/**
 * Ask for admission for real (not --dry) and check it stops: exactly the
 * `failing` checks fail, each detail matching its pattern, and not one byte
 * of the run file changes. With `cli`, `twinlock admit` also exits 3 with the
 * stop line and no stack trace.
 */
async function expectAdmissionStop(
  w: World,
  failing: Record<string, RegExp>,
  o: { now?: () => Date; cli?: boolean; exact?: boolean } = {},
): Promise<AdmitResult> {
  const before = readFileSync(w.runFile);
  const r = await admit({ run: w.runFile, store: folderRunStore(w.home), executor: EXECUTOR, actor: "executor-agent", now: o.now });
  expect(r.admitted).toBe(false);
  const failed = r.checks.filter((c) => !c.ok);
  if (o.exact !== false) expect(failed.map((c) => c.id).sort()).toEqual(Object.keys(failing).sort());
  for (const [id, pattern] of Object.entries(failing)) {
    const check = r.checks.find((c) => c.id === id);
    expect(check?.ok, `check ${id} fails`).toBe(false);
    expect(check?.detail).toMatch(pattern);
  }
  expect(readFileSync(w.runFile).equals(before), "a stopped admission writes nothing").toBe(true);
  if (o.cli !== false) {
    const cli = await runCli(["admit", w.runFile, "--home", w.home.dir, EXECUTOR, "--actor", "executor-agent"]);
    expect(cli.code).toBe(3);
    expect(cli.stdout.split("\n")[0]).toBe(ADMISSION_STOP);
    expect(cli.output).not.toMatch(STACK_FRAME);
    for (const id of Object.keys(failing)) expect(cli.stdout).toMatch(new RegExp(`FAIL {2}${id}\\b`));
    expect(readFileSync(w.runFile).equals(before)).toBe(true);
  }
  expectNeverExecuting(w.runFile);
  return r;
}

/** `twinlock verify-receipts RUN` exits 1 and prints a FAIL line matching `reason`. */
async function expectReceiptsRejected(w: World, reason: RegExp): Promise<void> {
  const r = await runCli(["verify-receipts", w.runFile, "--home", w.home.dir]);
  expect(r.code).toBe(1);
  expect(r.output).not.toMatch(STACK_FRAME);
  const fails = r.stdout.split("\n").filter((l) => l.startsWith("FAIL"));
  expect(fails.length).toBeGreaterThan(0);
  expect(fails.join("\n")).toMatch(reason);
}

// ---------------------------------------------------------------------------
// The attacker's tools: editing the run file by hand and rebuilding the chain.

/** Renumber and re-chain `events` the way the store does; returns the new head. */
function rechain(events: RunEvent[]): string {
  let prev = GENESIS;
  events.forEach((e, i) => {
    e.seq = i + 1;
    e.prev = prev;
    prev = hashEvent(e);
  });
  return prev;
}

/** A new event for the attacker to splice in (seq and prev are fixed by `rechain`). */
function forgedEvent(type: RunEvent["type"], actor: string, data: Record<string, unknown>): RunEvent {
  return { seq: 0, at: new Date().toISOString(), actor, type, data, prev: "" } as RunEvent;
}

/**
 * Edit the run file by hand as an attacker who knows the format: change the
 * events, then rebuild everything a reader verifies (every seq and prev, the
 * head, the revision, and the state from replayEvents). When replay refuses
 * the forged events, `handState` makes the state by hand instead, starting
 * from the replay of the untouched events.
 */
function forgeRun(w: World, edit: (events: RunEvent[]) => void, handState?: (state: RunState) => void): void {
  const run = JSON.parse(readFileSync(w.runFile, "utf8")) as RunFile;
  const original = structuredClone(run.events);
  edit(run.events);
  run.head = rechain(run.events);
  run.revision = run.events.length;
  if (handState) {
    const state = replayEvents(original);
    handState(state);
    run.state = state;
  } else {
    run.state = replayEvents(run.events);
  }
  writeFileSync(w.runFile, `${JSON.stringify(run, null, 1)}\n`);
  matchCheckpoint(w, run);
}

/**
 * Make the home's checkpoint agree with the run file. These tests check the second layer: even an
 * attacker who could also rewrite the gate home's checkpoint (outside the threat model; see
 * home-attacks.test.ts for the first layer, which refuses every forgery here without it) gets
 * nothing past the signatures.
 */
function matchCheckpoint(w: World, run: RunFile = JSON.parse(readFileSync(w.runFile, "utf8")) as RunFile): void {
  const last = run.events.at(-1) as RunEvent;
  writeCheckpoint(w.home, {
    format: "twinlock-checkpoint/1",
    run_id: run.state.run_id,
    home_id: w.home.id,
    seq: run.revision,
    head: run.head,
    last_write: { from_seq: run.revision - 1, from_head: last.prev, events: [last] },
    updated_at: new Date().toISOString(),
  });
}

/** A consent receipt as recorded in a workflow, without the bookkeeping replay adds. */
function consentAsSigned(wf: Workflow, index = -1): ConsentReceipt {
  const c = wf.consents.at(index);
  if (!c) throw new Error(`${wf.planner} has no consent`);
  const { consumed_at: _used, ...receipt } = c;
  return structuredClone(receipt);
}

/** Rebind a copied receipt to this run, pair, hash and revision, keeping its (now stale) signature. */
function rebind<R extends { run_id: string; planner: string; executor: string; handoff_hash: string; revision: number }>(
  receipt: R,
  state: RunState,
  wf: Workflow,
): R {
  return {
    ...receipt,
    run_id: state.run_id,
    planner: wf.planner,
    executor: wf.executor,
    ...("executor_title" in receipt ? { executor_title: wf.executor_title } : {}),
    handoff_hash: wf.handoff?.hash ?? "",
    revision: wf.handoff?.revision ?? 0,
  };
}

/** Hand-made state of a workflow the attacker says was consented with `receipt`. */
function claimConsented(receipt: ConsentReceipt, planner = PLANNER) {
  return (state: RunState) => {
    const wf = state.workflows[planner] as Workflow;
    wf.state = "dry_run_ready";
    wf.consents.push({ ...receipt, consumed_at: null });
    if (!state.authorized_execution_prompt_ids.includes(wf.executor)) state.authorized_execution_prompt_ids.push(wf.executor);
  };
}

// ---------------------------------------------------------------------------

describe("the baseline the attacks start from", () => {
  it("admits the exact twin when every decision is genuine and signed by a listed reviewer with the right", async () => {
    const w = makeWorld();
    await toDryRunReady(w);
    const dry = await admit({ run: w.runFile, store: folderRunStore(w.home), executor: EXECUTOR, actor: "executor-agent", dry: true });
    expect(dry.checks.filter((c) => !c.ok)).toEqual([]);
    expect(dry.checks.map((c) => c.id)).toEqual(expect.arrayContaining(["T1", "T2", "T3", "T4"]));
    expect((await runCli(["verify-receipts", w.runFile, "--home", w.home.dir])).code).toBe(0);
  });
});

describe("(a) an approval added by editing the run file by hand, with the chain rebuilt", () => {
  /** Freeze, then let the attacker splice in a plan_approved event carrying `receipt`. */
  async function forgeApproval(w: World, make: (base: ReviewReceipt) => ReviewReceipt): Promise<void> {
    await start(w);
    await freeze(w);
    const state = readRun(w.runFile, w.home).state;
    const wf = state.workflows[PLANNER] as Workflow;
    const base: ReviewReceipt = {
      kind: "review",
      run_id: state.run_id,
      planner: PLANNER,
      executor: EXECUTOR,
      reviewer: "alice",
      decision: "approved",
      feedback: null,
      handoff_hash: wf.handoff?.hash ?? "",
      revision: wf.handoff?.revision ?? 0,
      ...bound(w),
      at: new Date().toISOString(),
    };
    // First the forged approval alone: a real reviewer, shown "consent is next", cannot consent on it.
    const forged = JSON.parse(readFileSync(w.runFile, "utf8")) as RunFile;
    forgeRun(w, (events) => events.push(forgedEvent("plan_approved", "alice", { planner: PLANNER, receipt: make(base) })));
    expect((await runCli(["verify-log", w.runFile, "--home", w.home.dir])).code).toBe(0);
    expect(workflow(w).state).toBe("execution_consent_pending");
    await expectRefused(w, () => consent(w, "alice"), /trusted approval\(s\) and the suite requires 1/, "untrusted-approval");
    // Then the harder case: a genuine approval (carol) and consent (alice) are recorded, and the
    // attacker swaps carol's receipt for the forged one, rebuilding the chain. Admission must still stop.
    writeFileSync(w.runFile, `${JSON.stringify(forged, null, 1)}\n`);
    matchCheckpoint(w);
    await approve(w, "carol");
    await consent(w, "alice");
    forgeRun(w, (events) => {
      const approval = events.find((e) => e.type === "plan_approved") as RunEvent;
      (approval.data as { receipt: ReviewReceipt }).receipt = make(base);
    });
    // The forgery is a well-formed run file: chain, head and state all verify.
    expect((await runCli(["verify-log", w.runFile, "--home", w.home.dir])).code).toBe(0);
    expect(workflow(w).state).toBe("dry_run_ready");
  }

  it("refuses an unsigned forged approval at admission (T1) and in verify-receipts", async () => {
    const w = makeWorld();
    await forgeApproval(w, (r) => r);
    await expectAdmissionStop(w, {
      T1: /review receipt by alice is unsigned, and this suite requires signed receipts/,
      T4: /0 distinct trusted approver\(s\) of revision 1; 1 required/,
    });
    await expectReceiptsRejected(w, /review approved by alice: the review receipt by alice is unsigned/);
  });

  it("refuses a forged approval whose signature claims alice's key but was made with another (T1)", async () => {
    const w = makeWorld();
    await forgeApproval(w, (r) => {
      const signed = signReceipt(r, w.people.eve.key, "alice");
      return { ...signed, signature: { ...signed.signature, public_key: w.people.alice.publicKey } };
    });
    await expectAdmissionStop(w, {
      T1: /review receipt's signature does not verify: it was altered after signing/,
      T4: /0 distinct trusted approver/,
    });
    await expectReceiptsRejected(w, /signature does not verify/);
  });

  it("refuses a forged approval carrying random signature bytes under alice's key (T1)", async () => {
    const w = makeWorld();
    await forgeApproval(w, (r) => ({
      ...r,
      signature: { public_key: w.people.alice.publicKey, signer: "alice", value: Buffer.alloc(64, 7).toString("base64") },
    }));
    await expectAdmissionStop(w, { T1: /signature does not verify/, T4: /0 distinct trusted approver/ });
    await expectReceiptsRejected(w, /signature does not verify/);
  });

  it("refuses a forged approval properly signed with the attacker's own, unlisted key (T2)", async () => {
    const w = makeWorld();
    await forgeApproval(w, (r) => signReceipt(r, w.people.eve.key, "alice"));
    await expectAdmissionStop(w, {
      T2: /review receipt is signed by an unknown key \(ed25519:.*\), not one of the suite's reviewers/,
      T4: /0 distinct trusted approver/,
    });
    await expectReceiptsRejected(w, /signed by an unknown key/);
  });

  it("refuses forged approval and forged consent together, naming both receipts", async () => {
    const w = makeWorld();
    await start(w);
    await freeze(w);
    const state = readRun(w.runFile, w.home).state;
    const wf = state.workflows[PLANNER] as Workflow;
    const binding = {
      run_id: state.run_id,
      planner: PLANNER,
      executor: EXECUTOR,
      handoff_hash: wf.handoff?.hash ?? "",
      revision: 1,
      ...bound(w),
      at: new Date().toISOString(),
    };
    const review: ReviewReceipt = { kind: "review", ...binding, reviewer: "alice", decision: "approved", feedback: null };
    const granted: ConsentReceipt = {
      kind: "consent",
      ...binding,
      executor_title: wf.executor_title,
      user: "alice",
      decision: "approved",
      mode: "APPLY_SAFE",
      environment: "staging",
      actions: "all",
      budget: null,
      expires_at: null,
    };
    forgeRun(w, (events) =>
      events.push(
        forgedEvent("plan_approved", "alice", { planner: PLANNER, receipt: review }),
        forgedEvent("consent_granted", "alice", { planner: PLANNER, receipt: granted }),
      ),
    );
    expect(workflow(w).state).toBe("dry_run_ready");
    const r = await expectAdmissionStop(w, { T1: /review receipt by alice is unsigned/, T4: /0 distinct/ });
    expect(r.checks.find((c) => c.id === "T1")?.detail).toMatch(/consent receipt by alice is unsigned/);
    await expectReceiptsRejected(w, /consent approved by alice: the consent receipt by alice is unsigned/);
  });
});

describe("(b) a consent receipt copied from elsewhere", () => {
  it("refuses a consent copied from another run: replay names the other run, and rebinding breaks the signature", async () => {
    const w = makeWorld();
    const source = otherRun(w, "source-run.json");
    await toDryRunReady(source);
    await start(w);
    await freeze(w);
    await approve(w, "alice");
    expect(hashOf(w)).toBe(hashOf(source));
    const copied = consentAsSigned(workflow(source));
    const target = readRun(w.runFile, w.home).state;
    expect(copied.run_id).not.toBe(target.run_id);
    const pristine = readFileSync(w.runFile);

    // As copied: the receipt names another run, so no honest replay accepts it.
    expect(() =>
      forgeRun(w, (events) => events.push(forgedEvent("consent_granted", "alice", { planner: PLANNER, receipt: copied }))),
    ).toThrow(/receipt is for run run_[0-9a-f]+, not run_[0-9a-f]+/);
    // Written anyway with a hand-made state: every reader refuses the file, admission names the binding.
    forgeRun(
      w,
      (events) => events.push(forgedEvent("consent_granted", "alice", { planner: PLANNER, receipt: copied })),
      claimConsented(copied),
    );
    await expectAdmissionStop(w, { chain: /receipt is for run run_[0-9a-f]+, not run_[0-9a-f]+/ }, { exact: false });
    expect((await runCli(["verify-receipts", w.runFile, "--home", w.home.dir])).code).toBe(1);

    // Rebound to this run: the chain and replay accept it, but the signature no longer verifies.
    writeFileSync(w.runFile, pristine);
    matchCheckpoint(w);
    const rebound = { ...copied, run_id: target.run_id };
    forgeRun(w, (events) => events.push(forgedEvent("consent_granted", "alice", { planner: PLANNER, receipt: rebound })));
    expect(workflow(w).state).toBe("dry_run_ready");
    await expectAdmissionStop(w, { T1: /consent receipt's signature does not verify: .*signed for another run, revision or pair/ });
    await expectReceiptsRejected(w, /consent approved by alice: the consent receipt's signature does not verify/);
    expectNeverExecuting(w.runFile, source.runFile);
  });

  it("refuses a consent copied from an earlier revision: replay names the revision, and rebinding breaks the signature", async () => {
    const w = makeWorld();
    await toDryRunReady(w);
    const old = consentAsSigned(workflow(w));
    expect(old.revision).toBe(1);
    writeFileSync(path.join(w.handoff, "report.md"), "# Flaky checkout_total_test\n\nRevised after review.\n");
    await freeze(w);
    await approve(w, "alice");
    const wf = workflow(w);
    expect(wf).toMatchObject({ state: "execution_consent_pending", revision: 2 });
    const pristine = readFileSync(w.runFile);

    expect(() => forgeRun(w, (events) => events.push(forgedEvent("consent_granted", "alice", { planner: PLANNER, receipt: old })))).toThrow(
      /receipt is for sha256:[0-9a-f]+ revision 1, but the frozen handoff is sha256:[0-9a-f]+ revision 2/,
    );
    forgeRun(w, (events) => events.push(forgedEvent("consent_granted", "alice", { planner: PLANNER, receipt: old })), claimConsented(old));
    await expectAdmissionStop(w, { chain: /revision 1, but the frozen handoff is .* revision 2/ }, { exact: false });

    writeFileSync(w.runFile, pristine);
    matchCheckpoint(w);
    const rebound = rebind(old, readRun(w.runFile, w.home).state, wf);
    expect(rebound).toMatchObject({ revision: 2, handoff_hash: wf.handoff?.hash });
    forgeRun(w, (events) => events.push(forgedEvent("consent_granted", "alice", { planner: PLANNER, receipt: rebound })));
    await expectAdmissionStop(w, { T1: /consent receipt's signature does not verify/ });
    await expectReceiptsRejected(w, /rev 2 consent approved by alice: the consent receipt's signature does not verify/);
  });

  it("refuses a consent copied from another pair of the same run: replay names the pair, and rebinding breaks the signature", async () => {
    const w = makeWorld();
    const otherHandoff = path.join(w.dir, "handoff-md27");
    writeDemoHandoff(otherHandoff, demoHandoffRecords());
    writeFileSync(path.join(otherHandoff, "report.md"), "# A slow checkout\n\nProfiling notes.\n");
    await start(w, [PLANNER, OTHER_PLANNER]);
    await freeze(w);
    await freeze(w, { planner: OTHER_PLANNER, handoff: otherHandoff });
    await approve(w, "alice");
    await approve(w, "alice", { planner: OTHER_PLANNER });
    await consent(w, "alice", { planner: OTHER_PLANNER });
    const copied = consentAsSigned(workflow(w, OTHER_PLANNER));
    expect(copied).toMatchObject({ planner: "MD-27", executor: "MD-28" });
    const pristine = readFileSync(w.runFile);

    expect(() =>
      forgeRun(w, (events) => events.push(forgedEvent("consent_granted", "alice", { planner: PLANNER, receipt: copied }))),
    ).toThrow(/receipt is for MD-27→MD-28, not MD-29→MD-30/);
    forgeRun(
      w,
      (events) => events.push(forgedEvent("consent_granted", "alice", { planner: PLANNER, receipt: copied })),
      claimConsented(copied),
    );
    await expectAdmissionStop(w, { chain: /receipt is for MD-27→MD-28, not MD-29→MD-30/ }, { exact: false });

    writeFileSync(w.runFile, pristine);
    matchCheckpoint(w);
    const state = readRun(w.runFile, w.home).state;
    const rebound = rebind(copied, state, state.workflows[PLANNER] as Workflow);
    expect(rebound).toMatchObject({ planner: PLANNER, executor: EXECUTOR, executor_title: "Debugging fix executor" });
    forgeRun(w, (events) => events.push(forgedEvent("consent_granted", "alice", { planner: PLANNER, receipt: rebound })));
    expect(workflow(w).state).toBe("dry_run_ready");
    // The copied consent also binds MD-28's prompt file, not MD-30's: admission names that too.
    await expectAdmissionStop(w, { T1: /consent receipt's signature does not verify/, "executor-file": /consent for sha256:/ });
    await expectReceiptsRejected(w, /MD-29 rev 1 consent approved by alice: the consent receipt's signature does not verify/);
  });
});

describe("(c) receipts signed by keys the suite does not trust for the decision", () => {
  it("refuses a review signed by a revoked key when recorded", async () => {
    const w = makeWorld();
    await start(w);
    await freeze(w);
    await expectRefused(w, () => approve(w, "mallory"), /refused: the review receipt is signed by a revoked key/, "untrusted-receipt");
    const cli = await runCli([
      "review-pair-plan",
      w.runFile,
      "--home",
      w.home.dir,
      PLANNER,
      "--decision",
      "approved",
      "--handoff-hash",
      hashOf(w),
      "--key",
      w.people.mallory.file,
    ]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/^twinlock: refused: the review receipt is signed by a revoked key/);
    expect(workflow(w).state).toBe("plan_review_pending");
    expectNeverExecuting(w.runFile);
  });

  it("refuses, at admission, receipts whose key was revoked after they were recorded (T2)", async () => {
    const w = makeWorld();
    await toDryRunReady(w);
    editConfig(w, (doc) => doc.set("revoked", [w.people.mallory.publicKey, w.people.alice.publicKey]));
    await pin(w);
    const r = await expectAdmissionStop(w, {
      T2: /review receipt is signed by a revoked key/,
      T4: /0 distinct trusted approver/,
      policy: /the policy changed since the decision/,
    });
    expect(r.checks.find((c) => c.id === "T2")?.detail).toMatch(/consent receipt is signed by a revoked key/);
    await expectReceiptsRejected(w, /signed by a revoked key/);
  });

  it("refuses a review signed by an unknown key", async () => {
    const w = makeWorld();
    await start(w);
    await freeze(w);
    await expectRefused(
      w,
      () => approve(w, "eve"),
      /refused: the review receipt is signed by an unknown key .*not one of the suite's reviewers/,
      "untrusted-receipt",
    );
    const cli = await runCli([
      "review-pair-plan",
      w.runFile,
      "--home",
      w.home.dir,
      PLANNER,
      "--decision",
      "approved",
      "--handoff-hash",
      hashOf(w),
      "--key",
      w.people.eve.file,
      "--reviewer",
      "alice",
    ]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/unknown key/);
    expectNeverExecuting(w.runFile);
  });

  it("refuses a consent signed by a key with only the review right", async () => {
    const w = makeWorld();
    await start(w);
    await freeze(w);
    await approve(w, "carol");
    expect(workflow(w).state).toBe("execution_consent_pending");
    await expectRefused(w, () => consent(w, "carol"), /refused: carol's key has the rights review, not consent/, "untrusted-receipt");
    const cli = await runCli([
      "consent-pair-execution",
      w.runFile,
      "--home",
      w.home.dir,
      PLANNER,
      "--approve",
      "--handoff-hash",
      hashOf(w),
      "--key",
      w.people.carol.file,
    ]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/carol's key has the rights review, not consent/);
    expect(workflow(w).state).toBe("execution_consent_pending");
    expectNeverExecuting(w.runFile);
  });

  it("refuses, at admission, a consent whose signer lost the consent right after recording it (T3)", async () => {
    const w = makeWorld();
    await toDryRunReady(w);
    editConfig(w, (doc) => {
      doc.setIn(["reviewers", 0, "rights"], ["review"]);
    });
    await pin(w);
    await expectAdmissionStop(w, { T3: /alice's key has the rights review, not consent/, policy: /the policy changed since the decision/ });
  });
});

describe("(d) separation of duties", () => {
  it("refuses the freezer's own signed review of the plan she froze", async () => {
    const w = makeWorld({ separate_duties: true });
    await start(w);
    const frozen = await runCli([
      "freeze-pair-handoff",
      w.runFile,
      "--home",
      w.home.dir,
      PLANNER,
      "--handoff",
      w.handoff,
      "--key",
      w.people.alice.file,
    ]);
    expect(frozen.code).toBe(0);
    expect(workflow(w).handoff?.frozen_by).toBe("alice");
    const before = readFileSync(w.runFile);
    const own = await runCli([
      "review-pair-plan",
      w.runFile,
      "--home",
      w.home.dir,
      PLANNER,
      "--decision",
      "approved",
      "--handoff-hash",
      hashOf(w),
      "--key",
      w.people.alice.file,
    ]);
    expect(own.code).toBe(1);
    expect(own.stderr).toMatch(
      /^twinlock: refused: separate duties — alice froze revision 1 \(the same key\) and may not review it; another reviewer must/,
    );
    expect(own.output).not.toMatch(STACK_FRAME);
    expect(readFileSync(w.runFile).equals(before)).toBe(true);
    await expectRefused(w, () => approve(w, "alice"), /separate duties — alice froze revision 1/, "separate-duties");

    // Another reviewer may approve; the freezer still may not consent.
    await approve(w, "bob");
    await expectRefused(
      w,
      () => consent(w, "alice"),
      /separate duties — alice froze revision 1 \(the same key\) and may not consent to it/,
      "separate-duties",
    );
    expect(workflow(w).state).toBe("execution_consent_pending");
    expectNeverExecuting(w.runFile);
  });

  it("refuses, at admission, a run whose freezer also decided once the policy holds (T5)", async () => {
    const w = makeWorld({ separate_duties: false });
    await start(w);
    await freeze(w, { as: "alice" });
    await approve(w, "alice");
    await consent(w, "alice");
    editConfig(w, (doc) => doc.setIn(["policies", "separate_duties"], true));
    await pin(w);
    await expectAdmissionStop(w, {
      T5: /alice froze revision 1 and the same key decided its review, consent/,
      policy: /the policy changed since the decision/,
    });
  });
});

describe("(e) one approval where two are required", () => {
  it("keeps the plan in review, refuses consent, and stops admission at T4", async () => {
    const w = makeWorld({ required_approvals: 2 });
    await start(w);
    await freeze(w);
    const first = await approve(w, "alice");
    expect(first.workflow.state).toBe("plan_review_pending");
    await expectRefused(w, () => consent(w, "alice"), /cannot record execution consent: MD-29 is in state plan_review_pending/);
    await expectAdmissionStop(
      w,
      { T4: /1 distinct trusted approver\(s\) of revision 1; 2 required/, state: /plan_review_pending/ },
      { exact: false },
    );
  });

  it("stops admission at T4 when the attacker rewrites the lone approval into the final one (chain rebuilt)", async () => {
    const w = makeWorld({ required_approvals: 2 });
    await start(w);
    await freeze(w);
    await approve(w, "alice");
    const lone = readFileSync(w.runFile);
    // The signed receipt is untouched, so its signature still verifies: only the count can catch this.
    forgeRun(w, (events) => {
      const last = events.at(-1) as RunEvent;
      expect(last.type).toBe("approval_recorded");
      last.type = "plan_approved";
    });
    expect(workflow(w).state).toBe("execution_consent_pending");
    await expectRefused(w, () => consent(w, "alice"), /1 trusted approval\(s\) and the suite requires 2/, "untrusted-approval");
    // With a genuine second approval and consent recorded first, the attacker drops carol's approval.
    writeFileSync(w.runFile, lone);
    matchCheckpoint(w);
    await approve(w, "carol");
    await consent(w, "alice");
    forgeRun(w, (events) => {
      const carol = events.findIndex((e) => e.type === "plan_approved");
      (events[carol - 1] as RunEvent).type = "plan_approved";
      events.splice(carol, 1);
    });
    expect(workflow(w).state).toBe("dry_run_ready");
    await expectAdmissionStop(w, { T4: /1 distinct trusted approver\(s\) of revision 1; 2 required/ });
  });
});

describe("(f) two approvals by the same reviewer", () => {
  it("refuses the second approval by the same reviewer as a duplicate", async () => {
    const w = makeWorld({ required_approvals: 2 });
    await start(w);
    await freeze(w);
    await approve(w, "alice");
    await expectRefused(
      w,
      () => approve(w, "alice", { feedback: "still fine" }),
      /refused: alice already approved revision 1; each reviewer counts once, and 2 distinct approvals are required/,
      "duplicate-approval",
    );
    const cli = await runCli([
      "review-pair-plan",
      w.runFile,
      "--home",
      w.home.dir,
      PLANNER,
      "--decision",
      "approved",
      "--handoff-hash",
      hashOf(w),
      "--key",
      w.people.alice.file,
      "--json",
    ]);
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout)).toMatchObject({ ok: false, error: { kind: "refused", details: { attack: "duplicate-approval" } } });
    expect(workflow(w)).toMatchObject({ state: "plan_review_pending" });
    expect(workflow(w).reviews).toHaveLength(1);
  });

  it("counts a duplicated approval event once at admission (T4), even with its valid signature", async () => {
    const w = makeWorld({ required_approvals: 2 });
    await start(w);
    await freeze(w);
    await approve(w, "alice");
    await approve(w, "carol");
    await consent(w, "alice");
    // The attacker replaces carol's approval with a copy of alice's, signature and all.
    forgeRun(w, (events) => {
      const first = events.find((e) => e.type === "approval_recorded") as RunEvent;
      const carol = events.find((e) => e.type === "plan_approved") as RunEvent;
      carol.data = structuredClone(first.data);
      carol.actor = first.actor;
    });
    expect(workflow(w).reviews).toHaveLength(2);
    expect(workflow(w).state).toBe("dry_run_ready");
    await expectAdmissionStop(w, { T4: /1 distinct trusted approver\(s\) of revision 1; 2 required/ });
  });

  it("counts alice once when she re-signs a fresh approval and the attacker splices it in", async () => {
    const w = makeWorld({ required_approvals: 2 });
    await start(w);
    await freeze(w);
    const first = await approve(w, "alice");
    const { signature: _old, ...body } = first.receipt;
    const resigned = signReceipt(
      { ...body, at: new Date(Date.now() + 1000).toISOString(), feedback: "second look" },
      w.people.alice.key,
      "alice",
    );
    expect(verifyReceiptSignature(resigned)).toBe(true);
    await approve(w, "carol");
    await consent(w, "alice");
    forgeRun(w, (events) => {
      const carol = events.find((e) => e.type === "plan_approved") as RunEvent;
      carol.data = { planner: PLANNER, receipt: resigned };
      carol.actor = "alice";
    });
    expect(workflow(w).state).toBe("dry_run_ready");
    await expectAdmissionStop(w, { T4: /1 distinct trusted approver\(s\) of revision 1; 2 required/ });
  });
});

describe("(g) a handoff file swapped for a symlink after freezing", () => {
  it("fails admission check 4, naming the symlink, even when it points at identical bytes", async () => {
    const w = makeWorld();
    await toDryRunReady(w);
    const plan = path.join(w.handoff, "action_plan.json");
    const outside = path.join(w.dir, "elsewhere-action_plan.json");
    writeFileSync(outside, readFileSync(plan));
    unlinkSync(plan);
    symlinkSync(outside, plan);
    await expectAdmissionStop(w, { "4": /cannot re-hash the handoff: handoff contains a symbolic link \(action_plan\.json\)/ });
  });
});

describe("(h) a consent used after it expired", () => {
  it("fails admission check 7 once the consent's lifetime (the suite's 4h) has passed", async () => {
    const w = makeWorld({ consent_expiry: "4h" });
    const t0 = new Date("2026-03-01T09:00:00.000Z");
    const at = (ms: number) => () => new Date(t0.getTime() + ms);
    await start(w);
    await freeze(w);
    await approve(w, "alice", { now: at(0) });
    const granted = await consent(w, "alice", { now: at(0) });
    expect(granted.receipt.expires_at).toBe("2026-03-01T13:00:00.000Z");
    // Within the lifetime every check passes (dry: nothing used)...
    const within = await admit({
      run: w.runFile,
      store: folderRunStore(w.home),
      executor: EXECUTOR,
      actor: "executor-agent",
      dry: true,
      now: at(4 * 3_600_000 - 1),
    });
    expect(within.checks.filter((c) => !c.ok)).toEqual([]);
    // ...and at the instant it expires, admission stops on the expiry alone.
    await expectAdmissionStop(w, { "7": /the consent expired at 2026-03-01T13:00:00\.000Z/ }, { now: at(4 * 3_600_000), cli: false });
    await expectAdmissionStop(w, { "7": /the consent expired at/ }, { now: at(30 * 86_400_000), cli: false });
  });
});

describe("signing as someone else, and tampering after signing", () => {
  it("refuses an agent that passes --reviewer alice with bob's key", async () => {
    const w = makeWorld();
    await start(w);
    await freeze(w);
    const before = readFileSync(w.runFile);
    const cli = await runCli([
      "review-pair-plan",
      w.runFile,
      "--home",
      w.home.dir,
      PLANNER,
      "--decision",
      "approved",
      "--handoff-hash",
      hashOf(w),
      "--reviewer",
      "alice",
      "--key",
      w.people.bob.file,
    ]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toBe(
      "twinlock: --reviewer alice does not match the key, which belongs to bob; omit --reviewer or use your own key\n",
    );
    expect(readFileSync(w.runFile).equals(before)).toBe(true);
    await expectRefused(
      w,
      () =>
        reviewPairPlan({
          run: w.runFile,
          store: folderRunStore(w.home),
          planner: PLANNER,
          decision: "approved",
          handoffHash: hashOf(w),
          reviewer: "alice",
          key: w.people.bob.key,
        }),
      /--reviewer alice does not match the key, which belongs to bob/,
    );
    expectNeverExecuting(w.runFile);
  });

  it("refuses an unsigned approval naming a listed reviewer (an agent without any key)", async () => {
    const w = makeWorld();
    await start(w);
    await freeze(w);
    const cli = await runCli([
      "review-pair-plan",
      w.runFile,
      "--home",
      w.home.dir,
      PLANNER,
      "--decision",
      "approved",
      "--handoff-hash",
      hashOf(w),
      "--reviewer",
      "alice",
    ]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/the review receipt by alice is unsigned, and this suite requires signed receipts/);
    expectNeverExecuting(w.runFile);
  });

  it("fails verification when one byte of the signed feedback is flipped", () => {
    const w = makeWorld();
    const signed = signReceipt(
      {
        kind: "review",
        run_id: "run_0123456789abcdef",
        planner: PLANNER,
        executor: EXECUTOR,
        reviewer: "alice",
        decision: "approved",
        feedback: "ship it",
        handoff_hash: `sha256:${"ab".repeat(32)}`,
        revision: 1,
        at: "2026-03-01T09:00:00.000Z",
      },
      w.people.alice.key,
      "alice",
    );
    expect(verifyReceiptSignature(signed)).toBe(true);
    const bytes = Buffer.from(signed.feedback, "utf8");
    bytes[0] = (bytes[0] as number) ^ 0x01;
    const tampered = { ...signed, feedback: bytes.toString("utf8") };
    expect(tampered.feedback).toBe("rhip it");
    expect(verifyReceiptSignature(tampered)).toBe(false);
    const config = {
      reviewers: [{ name: "alice", public_key: w.people.alice.publicKey, rights: ["review" as const] }],
      policies: { require_signed_receipts: true },
    };
    expect(judgeReceiptTrust(signed, "review", config)).toMatchObject({ ok: true, signer: "alice" });
    expect(judgeReceiptTrust(tampered, "review", config)).toMatchObject({ ok: false, code: "bad-signature" });
  });

  it("refuses at admission a recorded approval whose feedback was edited after signing (chain rebuilt)", async () => {
    const w = makeWorld();
    await start(w);
    await freeze(w);
    await approve(w, "alice", { feedback: "ship it, but only A1" });
    await consent(w, "alice");
    forgeRun(w, (events) => {
      const receipt = (events.find((e) => e.type === "plan_approved") as RunEvent).data.receipt as ReviewReceipt;
      const bytes = Buffer.from(receipt.feedback ?? "", "utf8");
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0x03; // "A1" → "A2"
      receipt.feedback = bytes.toString("utf8");
      expect(receipt.feedback).toBe("ship it, but only A2");
    });
    await expectAdmissionStop(w, { T1: /review receipt's signature does not verify: it was altered after signing/, T4: /0 distinct/ });
    await expectReceiptsRejected(w, /review approved by alice: the review receipt's signature does not verify/);
  });

  it("cannot make a signature valid without the private key: a signature over other bytes fails", () => {
    const w = makeWorld();
    const receipt = { kind: "review", reviewer: "alice", decision: "approved" };
    const value = sign(null, Buffer.from("twinlock-receipt/v1\n{}"), w.people.alice.key).toString("base64");
    expect(verifyReceiptSignature({ ...receipt, signature: { public_key: w.people.alice.publicKey, signer: "alice", value } })).toBe(false);
  });
});

describe("fixed weakness, kept as a regression test", () => {
  // BUG: approverIdentity (src/trust/enforce-trust.ts:24) is `key:<public key>` for a signed
  // receipt but `name:<reviewer>` for an unsigned one. When signed receipts are not required,
  // alice's signed approval and an unsigned `--reviewer alice` approval are two identities, so
  // one person meets `required_approvals: 2` alone: the second approval moves the plan on to
  // consent, and T4 at admission (distinctApprovers, same file:30) counts 2 as well, so the run
  // can reach executing. Fix: identify approvers by the reviewer's name (for a trusted signed
  // receipt that name is bound to the key by judgeReceiptTrust's name check), falling back to
  // the key only for a signed receipt whose key no reviewer holds.
  it("counts alice once when she approves signed and again unsigned (signatures optional, two approvals required)", async () => {
    const w = makeWorld({ require_signed_receipts: false, required_approvals: 2 });
    await start(w);
    await freeze(w);
    await approve(w, "alice");
    await expectRefused(
      w,
      () =>
        reviewPairPlan({
          run: w.runFile,
          store: folderRunStore(w.home),
          planner: PLANNER,
          decision: "approved",
          handoffHash: hashOf(w),
          reviewer: "alice",
        }),
      /alice already approved revision 1/,
      "duplicate-approval",
    );
  });
});
