import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConflictError, IntegrityError, RefusalError, UsageError } from "../errors/errors.js";
import { verifyChain } from "../run/event-chain.js";
import type { EventDraft } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";

/** A store under test and a fresh run reference in it; `dispose` removes whatever the store made. */
export interface StoreHarness {
  store: RunStore;
  newRef(): string;
  dispose(): Promise<void>;
}

/** The time every contract write is made at. */
export const AT = new Date("2030-01-01T00:00:00.000Z");

/** The first event of a run the store holds (valid under replay, no suite needed). */
export function created(store: RunStore): EventDraft {
  return {
    type: "run_created",
    actor: "contract",
    data: {
      run_id: `run_${randomBytes(8).toString("hex")}`,
      home_id: store.home.id,
      suite: { root: "/contract/suite", suite_id: "contract-suite" },
      settings: { mode: "DRAFT_ONLY", environment: "default", actions: "all", budget: null },
      workflows: [{ planner: "MD-29", executor: "MD-30", executor_title: "Contract executor", pair_digest: `sha256:${"0".repeat(64)}` }],
    },
  };
}

/** A run-wide stop with `reason`: the smallest event that moves a run on. */
export const stop = (reason: string): EventDraft => ({
  type: "stop_raised",
  actor: "contract",
  data: { reason, workflow: null, note: null },
});

/**
 * The one contract every RunStore keeps (STYLE habit 12): run unchanged
 * against the gate-home folder store and against PostgreSQL. Stated as
 * behaviour, without the gate's rules: any valid events will do.
 */
export function runStoreContract(name: string, open: () => Promise<StoreHarness>): void {
  describe(`the RunStore contract: ${name}`, () => {
    const withStore = async (fn: (h: StoreHarness) => Promise<void>) => {
      const h = await open();
      try {
        await fn(h);
      } finally {
        await h.dispose();
      }
    };

    it("creates a run and reads it back verified, with its state and chain", () =>
      withStore(async ({ store, newRef }) => {
        const ref = newRef();
        const made = await store.create(ref, [created(store)], AT);
        const read = await store.read(ref);
        expect(read.file.revision).toBe(1);
        expect(read.state.run_id).toBe(made.state.run_id);
        expect(verifyChain(read.file.events, read.file.head).ok).toBe(true);
      }));

    it("refuses to create a run where one already is, and keeps the first", () =>
      withStore(async ({ store, newRef }) => {
        const ref = newRef();
        const first = await store.create(ref, [created(store)], AT);
        await expect(store.create(ref, [created(store)], AT)).rejects.toBeInstanceOf(RefusalError);
        expect((await store.read(ref)).state.run_id).toBe(first.state.run_id);
      }));

    it("refuses to read a run it does not hold", () =>
      withStore(async ({ store, newRef }) => {
        await expect(store.read(newRef())).rejects.toSatisfy(
          (e) => e instanceof UsageError || e instanceof IntegrityError || e instanceof RefusalError,
        );
      }));

    it("appends a decision's events, numbered and chained, and returns the run as written", () =>
      withStore(async ({ store, newRef }) => {
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        const { run, result } = await store.update(ref, () => ({ events: [stop("a"), stop("b")], result: 42 }), { now: () => AT });
        expect(result).toBe(42);
        expect(run.file.events.map((e) => e.seq)).toEqual([1, 2, 3]);
        expect(run.state.stops.map((s) => s.reason)).toEqual(["a", "b"]);
        expect(await store.read(ref)).toMatchObject({ file: { revision: 3, head: run.file.head } });
      }));

    it("writes nothing when the decision refuses", () =>
      withStore(async ({ store, newRef }) => {
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        await expect(
          store.update(ref, () => {
            throw new RefusalError("no");
          }),
        ).rejects.toThrow("no");
        expect((await store.read(ref)).file.revision).toBe(1);
      }));

    it("refuses a decision made on a revision that is no longer current (compare-and-swap)", () =>
      withStore(async ({ store, newRef }) => {
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        await store.update(ref, () => ({ events: [stop("a")], result: undefined }));
        await expect(store.update(ref, () => ({ events: [stop("b")], result: undefined }), { expectedRevision: 1 })).rejects.toBeInstanceOf(
          ConflictError,
        );
        expect((await store.read(ref)).file.revision).toBe(2);
      }));

    it("serializes racing decisions: every one lands exactly once and the chain never forks", () =>
      withStore(async ({ store, newRef }) => {
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        const n = 16;
        await Promise.all(Array.from({ length: n }, (_, i) => store.update(ref, () => ({ events: [stop(`r${i}`)], result: undefined }))));
        const run = await store.read(ref);
        expect(run.file.revision).toBe(n + 1);
        expect(new Set(run.state.stops.map((s) => s.reason)).size).toBe(n);
        expect(verifyChain(run.file.events, run.file.head).ok).toBe(true);
      }));

    it("lets exactly one of two decisions that each require the same revision land", () =>
      withStore(async ({ store, newRef }) => {
        const ref = newRef();
        await store.create(ref, [created(store)], AT);
        const outcomes = await Promise.allSettled(
          ["x", "y"].map((r) => store.update(ref, () => ({ events: [stop(r)], result: r }), { expectedRevision: 1 })),
        );
        expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
        expect((await store.read(ref)).file.revision).toBe(2);
      }));

    it("lists every run it holds, newest first, with the reference read takes", () =>
      withStore(async ({ store, newRef }) => {
        const refs = [newRef(), newRef()];
        const ids: string[] = [];
        for (const [i, ref] of refs.entries())
          ids.push((await store.create(ref, [created(store)], new Date(AT.getTime() + i * 1000))).state.run_id);
        const listed = await store.list();
        const mine = listed.filter((l) => ids.includes(l.run_id));
        expect(mine.map((l) => l.run_id)).toEqual([...ids].reverse());
        for (const l of mine) expect((await store.read(l.ref)).state.run_id).toBe(l.run_id);
      }));

    it("says it is ready to serve before any run exists", () =>
      withStore(async ({ store }) => {
        await expect(store.ready()).resolves.toBeUndefined();
      }));

    it("resolves a run's ID to the reference read takes, and an unknown ID to nothing", () =>
      withStore(async ({ store, newRef }) => {
        const made = await store.create(newRef(), [created(store)], AT);
        const ref = await store.resolve(made.state.run_id);
        expect(ref).toBeDefined();
        expect((await store.read(ref as string)).state.run_id).toBe(made.state.run_id);
        expect(await store.resolve(`run_${"0".repeat(16)}`)).toBeUndefined();
        expect(await store.resolve("../../etc/passwd")).toBeUndefined();
      }));

    it("keeps any sequence of appended decisions replayable to the state it reports (property)", () =>
      withStore(async ({ store, newRef }) => {
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.array(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), { minLength: 0, maxLength: 3 }), { maxLength: 6 }),
            async (batches) => {
              const ref = newRef();
              await store.create(ref, [created(store)], AT);
              for (const batch of batches) await store.update(ref, () => ({ events: batch.map(stop), result: undefined }));
              const run = await store.read(ref);
              expect(run.file.revision).toBe(1 + batches.flat().length);
              expect(run.state.stops.map((s) => s.reason)).toEqual(batches.flat());
            },
          ),
          { numRuns: 15 },
        );
      }));
  });
}
