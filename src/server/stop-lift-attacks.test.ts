/**
 * A stop lift lifts exactly the stops it was asked to: the passkey challenge
 * is the receipt naming them, and the run page's lift form names its own stop.
 */
import { afterEach, describe, expect, it } from "vitest";
import { raiseStop } from "../gate/hard-stops.js";
import { readRun } from "../home/run-ledger.js";
import type { RunState } from "../run/run-schema.js";
import {
  apiOf,
  askChallenge,
  call,
  complete,
  decide,
  PLANNER,
  type Reviewer,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
} from "../test-support/gate-server-fixture.js";
import { createAgentToken } from "./agent-tokens.js";

afterEach(removeServerWorlds);

const stopsOf = (w: ServerWorld): RunState["stops"] => readRun(w.runFile, w.home).state.stops;
const standing = (w: ServerWorld) =>
  stopsOf(w)
    .filter((s) => s.resolved_at === null)
    .map((s) => s.seq);

/** A person raises a stop (no signature is needed to stop); its number. */
async function stopBy(w: ServerWorld, actor: string, reason: string, workflow?: string): Promise<number> {
  const run = await raiseStop({ store: w.store, run: w.runFile, reason, workflow, actor });
  return run.file.revision;
}

/** The hidden fields of each lift form on a page (the run page by default), by the stop number it shows. */
async function liftFormsOnRunPage(w: ServerWorld, r: Reviewer, url = `/runs/${w.runId}`): Promise<Map<number, Record<string, string>>> {
  const html = await (await call(w, url, { cookie: r.cookie })).text();
  const forms = new Map<number, Record<string, string>>();
  for (const form of html.match(/<form[^>]*id="form-lift-[^"]*"[\s\S]*?<\/form>/g) ?? []) {
    const fields: Record<string, string> = {};
    for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[m[1] as string] = m[2] as string;
    // The CSRF token comes with every request the fixture makes.
    delete fields.csrf;
    forms.set(Number(fields.stops), fields);
  }
  return forms;
}

describe("lifting a stop from the gate's pages", () => {
  it("completes a lift challenge made for a run-wide stop without lifting a same-reason stop another person raised on a pair meanwhile", async () => {
    const w = await serverWorld();
    const alice = await reviewerFor(w, "alice");
    const mine = await stopBy(w, "alice", "db-freeze");
    const fields = { reason: "db-freeze", stops: [mine], note: "the freeze is over" };
    const asked = await askChallenge(w, alice, apiOf(w).lift, fields);
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    const bos = await stopBy(w, "bo", "db-freeze", PLANNER);
    const done = await complete(w, alice, apiOf(w).lift, fields, asked.body as never);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect((done.body.receipt as { stops: number[] }).stops).toEqual([mine]);
    expect(standing(w)).toEqual([bos]);
  });

  it("shows each standing stop with its own lift form, and the run-wide stop's form lifts that stop alone", async () => {
    const w = await serverWorld();
    const alice = await reviewerFor(w, "alice");
    const runWide = await stopBy(w, "alice", "db-freeze");
    const onPair = await stopBy(w, "bo", "db-freeze", PLANNER);
    const forms = await liftFormsOnRunPage(w, alice);
    expect([...forms.keys()].sort()).toEqual([runWide, onPair].sort());
    expect(forms.get(runWide)).toEqual({ reason: "db-freeze", workflow: "", stops: String(runWide) });
    const lifted = await decide(w, alice, apiOf(w).lift, { ...forms.get(runWide), resolution: "the freeze is over" });
    expect(lifted.status, JSON.stringify(lifted.body)).toBe(200);
    expect(standing(w)).toEqual([onPair]);
    // The lifted stop's form is gone; the pair's stays.
    expect([...(await liftFormsOnRunPage(w, alice)).keys()]).toEqual([onPair]);
  });

  it("shows the pair's page with each standing stop of the run and of the pair, each with its own lift form", async () => {
    const w = await serverWorld();
    const alice = await reviewerFor(w, "alice");
    const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId });
    expect((await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } })).status).toBe(200);
    const runWide = await stopBy(w, "alice", "db-freeze");
    const onPair = await stopBy(w, "bo", "db-freeze", PLANNER);
    const pairPage = (await call(w, `/runs/${w.runId}/pairs/${PLANNER}`, { cookie: alice.cookie })).headers.get("location") as string;
    const forms = await liftFormsOnRunPage(w, alice, pairPage);
    expect([...forms.keys()].sort()).toEqual([runWide, onPair].sort());
    expect(forms.get(onPair)).toEqual({ reason: "db-freeze", workflow: PLANNER, stops: String(onPair) });
    const lifted = await decide(w, alice, apiOf(w).lift, { ...forms.get(onPair), resolution: "CI is green" });
    expect(lifted.status, JSON.stringify(lifted.body)).toBe(200);
    expect(standing(w)).toEqual([runWide]);
  });

  it("refuses a lift that names no stop, or a stop that is not standing with that reason, before asking for the passkey", async () => {
    const w = await serverWorld();
    const alice = await reviewerFor(w, "alice");
    const stop = await stopBy(w, "alice", "db-freeze");
    const other = await stopBy(w, "alice", "flaky-ci");
    const none = await askChallenge(w, alice, apiOf(w).lift, { reason: "db-freeze", note: "done" });
    expect([none.status, none.body.code]).toEqual([400, "BAD_INPUT"]);
    expect(none.body.message).toMatch(/stops/);
    const wrong = await askChallenge(w, alice, apiOf(w).lift, { reason: "db-freeze", stops: [other], note: "done" });
    expect([wrong.status, wrong.body.code]).toEqual([409, "NO_SUCH_STOP"]);
    expect(await decide(w, alice, apiOf(w).lift, { reason: "db-freeze", stops: [stop], note: "done" })).toMatchObject({ status: 200 });
    const again = await askChallenge(w, alice, apiOf(w).lift, { reason: "db-freeze", stops: [stop], note: "done" });
    expect([again.status, again.body.code]).toEqual([409, "NO_SUCH_STOP"]);
    expect(standing(w)).toEqual([other]);
  });
});
