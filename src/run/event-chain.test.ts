import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson } from "../crypto/canonical-hash.js";
import { demoHandoffRecords, reviseDemoHandoff, writeDemoHandoff } from "../demo/demo-handoff.js";
import { IntegrityError } from "../errors/errors.js";
import { admit } from "../gate/admit.js";
import { approveApply } from "../gate/approve-apply.js";
import { closeWorkflow } from "../gate/close-workflow.js";
import { consentPairExecution } from "../gate/consent-pair-execution.js";
import { freezePairHandoff } from "../gate/freeze-pair-handoff.js";
import { raiseStop, resolveStop } from "../gate/hard-stops.js";
import { initRun } from "../gate/init-run.js";
import { reviewPairPlan } from "../gate/review-pair-plan.js";
import { folderRunStore } from "../home/folder-run-store.js";
import { readRunFile } from "../store/run-file.js";
import { runCli } from "../test-support/run-cli.js";
import { conformingChange, testHome } from "../test-support/run-fixture.js";
import { makeTempDir, removeTempDirs, unsignedExampleSuite } from "../test-support/temp-suite.js";
import { applyEvent, replayEvents } from "./apply-event.js";
import { GENESIS, hashEvent, verifyChain } from "./event-chain.js";
import type { RunEvent, RunFile, RunState } from "./run-schema.js";
import { findTransition, TRANSITION_EVENTS, type TransitionEvent } from "./transition-table.js";

const PLANNER = "MD-29";

/** A whole run of the source's flow, through the library: two revisions, review, consent, a stop, admission, close. */
async function buildRun(mode: "APPLY_SAFE" | "APPLY_APPROVED"): Promise<RunFile> {
  const dir = makeTempDir("twinlock-chain-");
  const runFile = path.join(dir, "run.json");
  const handoff = path.join(dir, "handoff");
  const hash = () => readRunFile(runFile).state.workflows[PLANNER]?.handoff?.hash as string;
  writeDemoHandoff(handoff);
  await initRun({
    store: folderRunStore(testHome()),
    run: runFile,
    suiteRoot: unsignedExampleSuite(),
    planners: [PLANNER],
    mode,
    environment: "staging",
    actor: "planner-agent",
  });
  await freezePairHandoff({
    store: folderRunStore(testHome()),
    run: runFile,
    planner: PLANNER,
    handoffDir: handoff,
    actor: "planner-agent",
  });
  await reviewPairPlan({
    store: folderRunStore(testHome()),
    run: runFile,
    planner: PLANNER,
    decision: "changes_requested",
    feedback: "Add Windows coverage",
    handoffHash: hash(),
    reviewer: "alice",
  });
  writeDemoHandoff(handoff, reviseDemoHandoff(demoHandoffRecords()));
  await freezePairHandoff({ store: folderRunStore(testHome()), run: runFile, planner: PLANNER, actor: "planner-agent" });
  await reviewPairPlan({
    store: folderRunStore(testHome()),
    run: runFile,
    planner: PLANNER,
    decision: "approved",
    handoffHash: hash(),
    reviewer: "alice",
  });
  await consentPairExecution({
    store: folderRunStore(testHome()),
    run: runFile,
    planner: PLANNER,
    approve: true,
    handoffHash: hash(),
    user: "carol",
  });
  if (mode === "APPLY_APPROVED") await approveApply({ store: folderRunStore(testHome()), run: runFile, planner: PLANNER, approver: "bob" });
  await raiseStop({ store: folderRunStore(testHome()), run: runFile, reason: "db-freeze", note: "month-end", actor: "ops" });
  await resolveStop({ store: folderRunStore(testHome()), run: runFile, reason: "db-freeze", note: "lifted", actor: "ops" });
  const admitted = await admit({ store: folderRunStore(testHome()), run: runFile, executor: "MD-30", actor: "executor-agent" });
  if (!admitted.admitted) throw new Error(`fixture admission failed: ${JSON.stringify(admitted.checks.filter((c) => !c.ok))}`);
  await closeWorkflow({
    store: folderRunStore(testHome()),
    run: runFile,
    planner: PLANNER,
    result: "verified",
    residual: "none",
    actor: "alice",
    executed: conformingChange({ dir: path.dirname(runFile) }, ["V1", "V2", "V3"]),
  });
  return JSON.parse(readFileSync(runFile, "utf8")) as RunFile;
}

let runs: RunFile[] = [];
beforeAll(async () => {
  runs = [await buildRun("APPLY_SAFE"), await buildRun("APPLY_APPROVED")];
}, 60_000);
afterAll(removeTempDirs);

const clone = <T>(x: T): T => structuredClone(x);

/** Every path inside a JSON value (not the root itself): where an edit can land. */
function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== "object") return [];
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return keys.flatMap((k) => {
    const p = [...prefix, k];
    return [p, ...pathsOf((value as Record<string | number, unknown>)[k], p)];
  });
}

function getAt(root: unknown, p: (string | number)[]): unknown {
  return p.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], root);
}

function setAt(root: unknown, p: (string | number)[], value: unknown): void {
  const parent = getAt(root, p.slice(0, -1)) as Record<string | number, unknown>;
  parent[p[p.length - 1] as string | number] = value;
}

function deleteAt(root: unknown, p: (string | number)[]): void {
  const parent = getAt(root, p.slice(0, -1)) as Record<string | number, unknown>;
  const key = p[p.length - 1] as string | number;
  if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[key];
}

/** Renumber 1..N and recompute every `prev` and the head: what an attacker who knows the scheme does. */
function rebuildChain(events: RunEvent[]): { events: RunEvent[]; head: string } {
  let prev = GENESIS;
  const out = events.map((e, i) => {
    const rebuilt = { ...e, seq: i + 1, prev };
    prev = hashEvent(rebuilt);
    return rebuilt;
  });
  return { events: out, head: prev };
}

/** The 1-based seq where verifyChain reports the break, or "ok". */
function breakAt(events: RunEvent[], head: string): number | "ok" {
  const verdict = verifyChain(events, head);
  return verdict.ok ? "ok" : verdict.seq;
}

/** Replay, returning the seq of the event it refuses, or "ok". */
function replayBreakAt(events: RunEvent[]): number | "ok" {
  try {
    replayEvents(events);
    return "ok";
  } catch (error) {
    if (!(error instanceof IntegrityError)) throw error;
    return error.details.seq as number;
  }
}

/** Write a run file and run `twinlock verify-log` on it in this process. */
async function verifyLog(file: RunFile): Promise<{ code: number; firstBad: number | undefined; text: string }> {
  const runFile = path.join(makeTempDir("twinlock-chain-verify-"), "run.json");
  writeFileSync(runFile, `${JSON.stringify(file, null, 1)}\n`);
  const r = await runCli(["verify-log", runFile]);
  const m = /first bad event (\d+)/.exec(r.output);
  return { code: r.code, firstBad: m ? Number(m[1]) : undefined, text: r.output };
}

const runArb = () => fc.integer({ min: 0, max: 1 }).map((i) => runs[i] as RunFile);

describe("verifyChain", () => {
  it("accepts the runs the library writes", () => {
    for (const run of runs) {
      expect(verifyChain(run.events, run.head)).toEqual({ ok: true, head: run.head });
      expect(canonicalJson(replayEvents(run.events))).toBe(canonicalJson(run.state));
    }
  });

  it("breaks at the edited event's link after any edit of any field of any event (changed, removed or added)", () => {
    fc.assert(
      fc.property(runArb(), fc.nat(), fc.nat(), fc.constantFrom("replace", "delete", "add"), fc.jsonValue(), (run, ei, pi, how, value) => {
        const n = run.events.length;
        const i = ei % n;
        const events = clone(run.events);
        const event = events[i] as RunEvent;
        const before = canonicalJson(event);
        if (how === "add") {
          const objects = [[], ...pathsOf(event)].filter((p) => {
            const v = getAt(event, p);
            return v !== null && typeof v === "object" && !Array.isArray(v);
          });
          const target = getAt(event, objects[pi % objects.length] as (string | number)[]) as Record<string, unknown>;
          target[`added_${pi}`] = value;
        } else {
          const paths = pathsOf(event);
          const p = paths[pi % paths.length] as (string | number)[];
          if (how === "delete") deleteAt(event, p);
          else setAt(event, p, value);
        }
        fc.pre(canonicalJson(event) !== before);
        // Whatever field changed, the break is named at the edited event itself.
        expect(breakAt(events, run.head)).toBe(i + 1);
      }),
      { numRuns: 300 },
    );
  });

  it("breaks at the gap when any event is deleted, or at the head when the last one is", () => {
    fc.assert(
      fc.property(runArb(), fc.nat(), (run, k) => {
        const n = run.events.length;
        const i = k % n;
        const events = run.events.filter((_, j) => j !== i);
        expect(breakAt(events, run.head)).toBe(i < n - 1 ? i + 1 : n - 1);
      }),
    );
  });

  it("breaks at an inserted event, whether its seq is left as it was or set to fit with the rest renumbered", () => {
    fc.assert(
      fc.property(runArb(), fc.nat(), fc.nat(), fc.boolean(), (run, pk, dk, renumber) => {
        const n = run.events.length;
        const p = pk % (n + 1); // 0-based insertion position
        const donor = clone(run.events[dk % n] as RunEvent);
        let events: RunEvent[];
        let expected: number;
        if (!renumber) {
          events = [...run.events.slice(0, p), donor, ...run.events.slice(p)];
          // A copy of the event already at that position fits its slot; the break is at the next one.
          expected = donor.seq === p + 1 ? p + 2 : p + 1;
        } else {
          // The inserted event is linked correctly to its predecessor; the events after it are
          // renumbered but cannot be re-linked without rebuilding the whole chain.
          const linked = { ...donor, seq: p + 1, prev: p === 0 ? GENESIS : hashEvent(run.events[p - 1] as RunEvent) };
          events = [...run.events.slice(0, p), linked, ...run.events.slice(p).map((e) => ({ ...e, seq: e.seq + 1 }))];
          expected = p < n ? p + 2 : n + 1;
        }
        expect(breakAt(events, run.head)).toBe(expected);
      }),
    );
  });

  it("breaks at the first moved event when events are reordered, with or without renumbering", () => {
    fc.assert(
      fc.property(runArb(), fc.nat(), fc.nat(), fc.boolean(), (run, ak, bk, renumber) => {
        const n = run.events.length;
        const a = ak % n;
        const b = bk % n;
        fc.pre(a !== b);
        const [lo, hi] = a < b ? [a, b] : [b, a];
        const events = clone(run.events);
        [events[lo], events[hi]] = [events[hi] as RunEvent, events[lo] as RunEvent];
        if (renumber) for (const [i, e] of events.entries()) e.seq = i + 1;
        expect(breakAt(events, run.head)).toBe(lo + 1);
      }),
    );
  });

  it("breaks when the head is replaced, at the last event", () => {
    for (const run of runs) expect(breakAt(run.events, `sha256:${"1".repeat(64)}`)).toBe(run.events.length);
  });
});

/** Receipt-bearing events and where replay keeps their receipt in the state. */
const RECEIPT_HOMES: Partial<Record<RunEvent["type"], "reviews" | "consents" | "apply_approvals" | "admissions">> = {
  changes_requested: "reviews",
  plan_approved: "reviews",
  consent_granted: "consents",
  apply_approved: "apply_approvals",
  admitted: "admissions",
};

describe("verify-log", () => {
  it("exits 0 on the runs the library writes", async () => {
    for (const run of runs) expect((await verifyLog(run)).code).toBe(0);
  });

  it("exits 1 naming the first bad event when a receipt is edited consistently in its event and in the stored state", async () => {
    await fc.assert(
      fc.asyncProperty(
        runArb(),
        fc.nat(),
        fc.constantFrom("at", "who", "feedback"),
        fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() === s && s.length > 0),
        fc.date({ min: new Date("2020-01-01T00:00:00Z"), max: new Date("2040-01-01T00:00:00Z"), noInvalidDate: true }),
        async (run, k, field, text, date) => {
          const candidates = run.events.filter((e) => RECEIPT_HOMES[e.type] !== undefined);
          const target = candidates[k % candidates.length] as RunEvent;
          const file = clone(run);
          const event = file.events[target.seq - 1] as RunEvent;
          const receipt = (event.data as { receipt: Record<string, unknown> }).receipt;
          const home = file.state.workflows[PLANNER]?.[RECEIPT_HOMES[event.type] as "reviews"] as unknown as Record<string, unknown>[];
          const stored = home.find(
            (r) => canonicalJson({ ...r, consumed_at: undefined }) === canonicalJson({ ...receipt, consumed_at: undefined }),
          );
          expect(stored, "the state keeps the receipt").toBeDefined();
          const key = field === "at" ? "at" : field === "feedback" ? (receipt.kind === "review" ? "feedback" : "at") : whoKey(receipt);
          const value = key === "at" ? date.toISOString() : text;
          fc.pre(receipt[key] !== value);
          receipt[key] = value;
          (stored as Record<string, unknown>)[key] = value;
          const expected = target.seq;
          const result = await verifyLog(file);
          expect(result.code, result.text).toBe(1);
          expect(result.firstBad).toBe(expected);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("exits 1 when only the stored state is edited (an executor added to authorized_execution_prompt_ids)", async () => {
    const file = clone(runs[0] as RunFile);
    file.state.authorized_execution_prompt_ids.push("MD-28");
    const result = await verifyLog(file);
    expect(result.code).toBe(1);
    expect(result.firstBad).toBe(file.events.length);
    expect(result.text).toContain("differs from the replay");
  });
});

function whoKey(receipt: Record<string, unknown>): string {
  return { review: "reviewer", consent: "user", apply_approval: "approver", admission: "actor" }[receipt.kind as string] ?? "at";
}

/** The state a workflow is in after replaying `events`. */
function stateAfter(events: RunEvent[]): RunState {
  return replayEvents(events);
}

describe("replay refuses a rebuilt chain that describes a move the transition table forbids", () => {
  const forge = (run: RunFile, events: RunEvent[], state: RunState = run.state): RunFile => {
    const { events: chained, head } = rebuildChain(events);
    return { ...clone(run), events: chained, head, revision: chained.length, state };
  };

  it("when any recorded decision is copied to any other point of the log", async () => {
    await fc.assert(
      fc.asyncProperty(runArb(), fc.nat(), fc.nat(), fc.boolean(), async (run, dk, pk, replace) => {
        const movable = run.events.filter((e) => (TRANSITION_EVENTS as readonly string[]).includes(e.type));
        const donor = clone(movable[dk % movable.length] as RunEvent);
        const p = 1 + (pk % run.events.length); // 0-based position after run_created
        const events = replace
          ? [...run.events.slice(0, p), donor, ...run.events.slice(p + 1)]
          : [...run.events.slice(0, p), donor, ...run.events.slice(p)];
        const forged = forge(run, events);
        expect(verifyChain(forged.events, forged.head).ok).toBe(true);
        const before = stateAfter(run.events.slice(0, p)).workflows[PLANNER]?.state;
        const legal = before !== undefined && findTransition(before, donor.type as TransitionEvent) !== undefined;
        if (!legal) {
          expect(replayBreakAt(forged.events)).toBe(p + 1);
          const result = await verifyLog(forged);
          expect(result.code).toBe(1);
          expect(result.firstBad).toBe(p + 1);
        } else {
          // A legal move may still be refused for its receipt's binding; it is never accepted silently
          // unless replay reproduces a state, which then must be what the file claims to verify.
          const at = replayBreakAt(forged.events);
          if (at !== "ok") expect(at).toBeGreaterThanOrEqual(p + 1);
        }
      }),
      { numRuns: 60 },
    );
  });

  it("when the approval receipt is rebound to revision 1 and moved before its review was requested", () => {
    const run = runs[0] as RunFile;
    const firstFreeze = run.events.findIndex((e) => e.type === "handoff_frozen");
    const frozen1 = (run.events[firstFreeze] as RunEvent).data as { hash: string; revision: number };
    const approval = clone(run.events.find((e) => e.type === "plan_approved") as RunEvent);
    Object.assign(approval.data.receipt as Record<string, unknown>, { handoff_hash: frozen1.hash, revision: frozen1.revision });
    const events = [
      ...run.events.slice(0, firstFreeze + 1),
      approval,
      ...run.events.slice(firstFreeze + 1).filter((e) => e.type !== "plan_approved"),
    ];
    const forged = forge(run, events);
    expect(replayBreakAt(forged.events)).toBe(firstFreeze + 2);
    expect(() => applyEvent(stateAfter(forged.events.slice(0, firstFreeze + 1)), forged.events[firstFreeze + 1] as RunEvent)).toThrow(
      /plan_approved is not legal from state handoff_frozen/,
    );
  });

  it("when the approval is deleted, so consent follows a review that never approved", () => {
    const run = runs[0] as RunFile;
    const events = run.events.filter((e) => e.type !== "plan_approved");
    const consentAt = events.findIndex((e) => e.type === "consent_granted");
    const forged = forge(run, events);
    expect(replayBreakAt(forged.events)).toBe(consentAt + 1);
  });

  it("when the approval receipt is edited to approve a revision that was never frozen, or to another decision", () => {
    const run = runs[0] as RunFile;
    const approvalAt = run.events.findIndex((e) => e.type === "plan_approved");
    for (const edit of [
      (r: Record<string, unknown>) => (r.handoff_hash = `sha256:${"a".repeat(64)}`),
      (r: Record<string, unknown>) => (r.revision = 1),
      (r: Record<string, unknown>) => (r.decision = "declined"),
      (r: Record<string, unknown>) => (r.executor = "MD-28"),
    ]) {
      const events = clone(run.events);
      edit((events[approvalAt] as RunEvent).data.receipt as Record<string, unknown>);
      expect(replayBreakAt(forge(run, events).events)).toBe(approvalAt + 1);
    }
  });

  it("when an admission is appended straight after the approval, skipping consent", () => {
    const run = runs[0] as RunFile;
    const approvalAt = run.events.findIndex((e) => e.type === "plan_approved");
    const admission = run.events.find((e) => e.type === "admitted") as RunEvent;
    const forged = forge(run, [...run.events.slice(0, approvalAt + 1), admission]);
    expect(replayBreakAt(forged.events)).toBe(approvalAt + 2);
    expect(() => readRunFileFrom(forged)).toThrow(IntegrityError);
  });
});

function readRunFileFrom(file: RunFile): unknown {
  const runFile = path.join(makeTempDir("twinlock-chain-read-"), "run.json");
  writeFileSync(runFile, `${JSON.stringify(file, null, 1)}\n`);
  return readRunFile(runFile);
}
