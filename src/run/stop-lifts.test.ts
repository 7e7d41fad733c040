import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IntegrityError } from "../errors/errors.js";
import { appendTo, type EventDraft, readRunFile, serializeRunFile } from "../store/run-file.js";
import { liftsNotNamingTheirStop } from "./admission-checks.js";
import { applyEvent } from "./apply-event.js";
import type { RunFile, StopResolution } from "./run-schema.js";

const AT = new Date("2030-01-01T00:00:00.000Z");
const RUN_ID = "run_0123456789abcdef";
const PLANNERS = ["MD-27", "MD-29"] as const;

const created: EventDraft = {
  type: "run_created",
  actor: "init",
  data: {
    run_id: RUN_ID,
    home_id: "home_0123456789abcdef",
    suite: { root: "/suite", suite_id: "suite" },
    settings: { mode: "DRAFT_ONLY", environment: "default", actions: "all", budget: null },
    workflows: PLANNERS.map((planner, i) => ({
      planner,
      executor: `MD-${30 + i}`,
      executor_title: "Executor",
      pair_digest: `sha256:${"0".repeat(64)}`,
    })),
  },
};

const raise = (by: string, reason: string, workflow: string | null = null): EventDraft => ({
  type: "stop_raised",
  actor: by,
  data: { reason, workflow, note: null },
});

const lift = (by: string, reason: string, stops: number[], workflow: string | null = null): EventDraft => {
  const receipt: StopResolution = {
    kind: "stop_resolution",
    run_id: RUN_ID,
    reason,
    workflow,
    stops,
    by,
    resolution: "fixed",
    at: AT.toISOString(),
  };
  return { type: "stop_resolved", actor: by, data: { receipt } };
};

/** A run of these events after run_created (event 1), so the first draft is event 2. */
const runOf = (...drafts: EventDraft[]): RunFile => appendTo(undefined, [created, ...drafts], AT);

/** The refusal replay gives for the last draft after the others. */
function refusalOf(...drafts: EventDraft[]): string {
  const before = runOf(...drafts.slice(0, -1));
  try {
    appendTo(before, drafts.slice(-1), AT);
  } catch (error) {
    if (error instanceof IntegrityError) return error.message;
    throw error;
  }
  throw new Error("replay accepted it");
}

const standing = (run: RunFile) => run.state.stops.filter((s) => s.resolved_at === null).map((s) => s.seq);

describe("a stop lift lifts exactly the stops it names", () => {
  it("leaves standing a stop of the same reason raised by another person after the lift was prepared", () => {
    // Ana prepares the lift of her run-wide stop (event 2); Bo then raises the same reason on MD-29 (event 3);
    // Ana's receipt, unchanged, is recorded: only her stop is lifted.
    const run = runOf(raise("ana", "db-freeze"), raise("bo", "db-freeze", "MD-29"), lift("ana", "db-freeze", [2]));
    expect(standing(run)).toEqual([3]);
    expect(run.state.stops[0]?.resolved_by).toBe("ana");
  });

  it("lifts only the run-wide stop when pairs have stops of the same reason too", () => {
    const run = runOf(
      raise("ana", "db-freeze"),
      raise("bo", "db-freeze", "MD-27"),
      raise("cy", "db-freeze", "MD-29"),
      lift("ana", "db-freeze", [2]),
    );
    expect(standing(run)).toEqual([3, 4]);
  });

  it("lifts several stops when the lift names each of them", () => {
    const run = runOf(raise("ana", "db-freeze"), raise("bo", "db-freeze", "MD-29"), lift("ana", "db-freeze", [2, 3]));
    expect(standing(run)).toEqual([]);
  });

  it("refuses a lift naming an event that is not a raised stop", () => {
    expect(refusalOf(raise("ana", "db-freeze"), lift("ana", "db-freeze", [1]))).toMatch(
      /event 3 \(stop_resolved\) is invalid: it lifts stop 1, but event 1 is not a raised stop/,
    );
    expect(refusalOf(raise("ana", "db-freeze"), lift("ana", "db-freeze", [7]))).toMatch(
      /it lifts stop 7, but event 7 is not a raised stop/,
    );
  });

  it("refuses a lift naming a stop that is already lifted", () => {
    expect(refusalOf(raise("ana", "db-freeze"), lift("ana", "db-freeze", [2]), lift("ana", "db-freeze", [2]))).toMatch(
      /it lifts stop 2 \(!STOP:db-freeze\), which was already lifted at/,
    );
  });

  it("refuses a lift naming a stop of another reason", () => {
    expect(refusalOf(raise("ana", "db-freeze"), raise("bo", "flaky-ci"), lift("ana", "db-freeze", [2, 3]))).toMatch(
      /it lifts stop 3 as !STOP:db-freeze, but stop 3 is !STOP:flaky-ci/,
    );
  });

  it("refuses a lift for one workflow naming a stop on the whole run or on another pair", () => {
    expect(refusalOf(raise("ana", "db-freeze"), lift("ana", "db-freeze", [2], "MD-29"))).toMatch(
      /it lifts stop 2 on MD-29, but stop 2 is on the whole run/,
    );
    expect(refusalOf(raise("ana", "db-freeze", "MD-27"), lift("ana", "db-freeze", [2], "MD-29"))).toMatch(/stop 2 is on MD-27/);
  });

  it("refuses a lift naming a stop twice or out of order", () => {
    const two = [raise("ana", "db-freeze"), raise("ana", "db-freeze")];
    expect(refusalOf(...two, lift("ana", "db-freeze", [2, 2]))).toMatch(/not in ascending order without repeats \(2, then 2\)/);
    expect(refusalOf(...two, lift("ana", "db-freeze", [3, 2]))).toMatch(/not in ascending order without repeats \(3, then 2\)/);
  });

  it("refuses a lift naming no stop, and one from an earlier twinlock that names only a reason, saying it does not guess", () => {
    expect(refusalOf(raise("ana", "db-freeze"), lift("ana", "db-freeze", []))).toMatch(
      /does not match the stop_resolved schema \(receipt\.stops/,
    );
    const old = lift("ana", "db-freeze", [2]);
    delete (old.data.receipt as Partial<StopResolution>).stops;
    expect(refusalOf(raise("ana", "db-freeze"), old)).toMatch(
      /receipt\.stops: the lift's list of stops \(stops\) is missing: the run was recorded by an earlier twinlock whose stop lifts did not name the stops they lifted, and this twinlock does not guess which ones a lift meant; finish it with the twinlock that made it, or start a new run with init-run/,
    );
  });

  it("refuses a run file from an earlier twinlock, whose stops have no numbers and whose lifts name none, saying why and what to do", () => {
    const run = runOf(raise("ana", "db-freeze"), raise("bo", "db-freeze", "MD-29"), lift("ana", "db-freeze", [2, 3]));
    // As the earlier twinlock wrote it: no seq on the stops, no stops in the lift receipts.
    const old = JSON.parse(serializeRunFile(run)) as RunFile;
    for (const s of old.state.stops) {
      delete (s as Partial<typeof s>).seq;
      if (s.resolution_receipt) delete (s.resolution_receipt as Partial<StopResolution>).stops;
    }
    const dir = mkdtempSync(path.join(tmpdir(), "twinlock-old-lift-"));
    try {
      const file = path.join(dir, "run.json");
      writeFileSync(file, JSON.stringify(old));
      expect(() => readRunFile(file)).toThrow(
        /does not match the run-file schema at state\.stops\.0\.seq: the stop's number \(seq\) is missing: the run was recorded by an earlier twinlock whose stop lifts did not name the stops they lifted/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("has admission find a lifted stop whose receipt does not name it, and none when every receipt names its stops", () => {
    const run = runOf(raise("ana", "db-freeze"), raise("bo", "db-freeze", "MD-29"), lift("ana", "db-freeze", [2, 3]));
    expect(liftsNotNamingTheirStop(run.state, "MD-29")).toEqual([]);
    const forged = structuredClone(run.state);
    const s = forged.stops[1];
    if (s?.resolution_receipt) s.resolution_receipt = { ...s.resolution_receipt, stops: [2] };
    expect(liftsNotNamingTheirStop(forged, "MD-29").map((x) => x.seq)).toEqual([3]);
    // Another pair is not held back by MD-29's stop.
    expect(liftsNotNamingTheirStop(forged, "MD-27")).toEqual([]);
  });
});

/** A stop a lift names: the k-th stop raised so far (whatever it is now), or any event number. */
type Pick = { raised: number } | { raw: number };

type Op =
  | { kind: "raise"; by: string; reason: string; workflow: string | null }
  | { kind: "lift"; by: string; reason: string; workflow: string | null; picks: Pick[]; ascending: boolean };

const person = fc.constantFrom("ana", "bo", "cy");
const reason = fc.constantFrom("db-freeze", "flaky-ci");
const workflow = fc.constantFrom<string | null>(null, ...PLANNERS);
const pick: fc.Arbitrary<Pick> = fc.oneof(
  { weight: 4, arbitrary: fc.nat().map((raised) => ({ raised })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }).map((raw) => ({ raw })) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("raise" as const), by: person, reason, workflow }),
  fc.record({
    kind: fc.constant("lift" as const),
    by: person,
    reason,
    workflow: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: workflow }),
    // Stops raised or not, standing or lifted, of the reason or not, repeated, in order or not.
    picks: fc.array(pick, { minLength: 0, maxLength: 3 }),
    ascending: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  }),
);

interface ModelStop {
  reason: string;
  workflow: string | null;
  liftedBy: number | null;
}

describe("random sequences of raises and lifts by several people", () => {
  it("lift a stop only by a lift that names it, and record a lift exactly when each stop it names stands with its reason", () => {
    let recorded = 0;
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        let run = runOf();
        const model = new Map<number, ModelStop>();
        for (const o of ops) {
          const seq = run.events.length + 1;
          if (o.kind === "raise") {
            run = appendTo(run, [raise(o.by, o.reason, o.workflow)], AT);
            model.set(seq, { reason: o.reason, workflow: o.workflow, liftedBy: null });
            continue;
          }
          const raised = [...model.keys()];
          const named = o.picks.map((p) => ("raw" in p ? p.raw : (raised[p.raised % Math.max(1, raised.length)] ?? 1)));
          const picks = o.ascending ? named.sort((a, b) => a - b) : named;
          const legal =
            picks.length > 0 &&
            picks.every((p, i) => i === 0 || p > (picks[i - 1] as number)) &&
            picks.every((p) => {
              const m = model.get(p);
              return m !== undefined && m.liftedBy === null && m.reason === o.reason && (o.workflow === null || m.workflow === o.workflow);
            });
          const draft = lift(o.by, o.reason, picks, o.workflow);
          let accepted = true;
          try {
            run = appendTo(run, [draft], AT);
          } catch (error) {
            if (!(error instanceof IntegrityError)) throw error;
            accepted = false;
          }
          expect(accepted).toBe(legal);
          if (accepted) for (const p of picks) (model.get(p) as ModelStop).liftedBy = seq;
          if (accepted) recorded++;
        }
        // Every stop: lifted exactly when the model says, and by the lift that named it.
        expect(run.state.stops.map((s) => s.seq)).toEqual([...model.keys()]);
        for (const s of run.state.stops) {
          const m = model.get(s.seq) as ModelStop;
          expect(s.resolved_at !== null).toBe(m.liftedBy !== null);
          if (m.liftedBy !== null) {
            const event = run.events[m.liftedBy - 1];
            expect(event?.type).toBe("stop_resolved");
            expect((event?.data.receipt as StopResolution | undefined)?.stops).toContain(s.seq);
            expect(s.resolution_receipt?.stops).toContain(s.seq);
          }
        }
        for (const planner of PLANNERS) expect(liftsNotNamingTheirStop(run.state, planner)).toEqual([]);
        // And the state is what replaying the whole log gives.
        let replayed: RunFile["state"] | undefined;
        for (const e of run.events) replayed = applyEvent(replayed, e);
        expect(replayed).toEqual(run.state);
      }),
      { numRuns: 300 },
    );
    // Not vacuous: some lifts were legal and recorded.
    expect(recorded).toBeGreaterThan(20);
  });
});
