/*
 * twinlock/langgraph's planner side on a team (PostgreSQL) store: the
 * planner's graph freezes and waits through the gate server's MCP endpoint
 * with its agent token (gateServerPlannerSession), paused by LangGraph's
 * interrupt() on a MemorySaver checkpoint, and resumed with the decision a
 * person recorded in the database. Needs TWINLOCK_TEST_POSTGRES.
 */
import path from "node:path";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { afterAll, describe, expect, it } from "vitest";
import { gateServerPlannerSession, NO_DECISION_YET, plannerInterruptTools, reviewResume } from "../../src/adapters/langgraph.js";
import { demoHandoffRecords, writeDemoHandoff } from "../../src/demo/demo-handoff.js";
import { initRun } from "../../src/gate/init-run.js";
import { reviewPairPlan } from "../../src/gate/review-pair-plan.js";
import { openGateHome } from "../../src/home/gate-home.js";
import { pinSuite } from "../../src/home/suite-pins.js";
import { createAgentToken } from "../../src/server/agent-tokens.js";
import { createGateApp } from "../../src/server/create-gate-app.js";
import { migratePostgres, type PostgresRunStore, postgresRunStore } from "../../src/store/postgres/postgres-run-store.js";
import { TEST_HOST, TEST_ORIGIN } from "../../src/test-support/gate-server-fixture.js";
import { freshPostgresDatabase, TEST_POSTGRES } from "../../src/test-support/postgres-database.js";
import { makeRunTempDir, PLANNER, RUN_EXAMPLE_SUITE, removeGateRuns, TEST_PINNER } from "../../src/test-support/run-fixture.js";
import { ALICE_KEY } from "../../src/test-support/signed-run.js";

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  removeGateRuns();
});

/** A fake chat model whose turn is the count of its own messages in the history (so a resumed thread goes on). */
class ScriptedChatModel extends BaseChatModel {
  constructor(private readonly calls: string[]) {
    super({});
  }
  _llmType(): string {
    return "scripted";
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const turn = messages.filter((m) => m instanceof AIMessage).length;
    const name = this.calls[turn];
    const message = name
      ? new AIMessage({ content: "", tool_calls: [{ id: `call-${turn + 1}`, name, args: {}, type: "tool_call" }] })
      : new AIMessage("done");
    return { generations: [{ text: "", message }] };
  }
}

/** A migrated team database with the example suite pinned, a run in it, the gate server's app on it, and the planner agent's token. */
async function teamServer() {
  const db = await freshPostgresDatabase("twinlock_langgraph");
  cleanups.push(db.drop);
  await migratePostgres(db.url);
  const root = makeRunTempDir("twinlock-langgraph-team-");
  const store: PostgresRunStore = postgresRunStore(db.url, openGateHome(path.join(root, "home"), { create: true }));
  cleanups.push(() => store.close());
  await pinSuite(store.home, { suiteDir: RUN_EXAMPLE_SUITE, allowUnsigned: true, key: TEST_PINNER });
  const handoffRoot = path.join(root, "handoffs");
  const ref = "team/langgraph";
  const run = await initRun({
    run: ref,
    store,
    suiteRoot: RUN_EXAMPLE_SUITE,
    planners: [PLANNER],
    mode: "APPLY_SAFE",
    environment: "staging",
    actions: "all",
    budget: null,
    actor: "alice",
  });
  // The team store's agents freeze inside the server's handoff root, in their run's own folder.
  const handoff = path.join(handoffRoot, run.state.run_id);
  writeDemoHandoff(handoff, demoHandoffRecords());
  const { app } = createGateApp({
    store,
    origin: TEST_ORIGIN,
    allowedHosts: [TEST_HOST],
    tls: false,
    insecureHttp: false,
    handoffRoot,
    log: () => {},
  });
  const { token } = await createAgentToken(store.home, { agent: "planner-agent", runId: run.state.run_id });
  const fetchThroughApp = (async (url: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.set("host", TEST_HOST);
    return app.request(String(url instanceof Request ? url.url : url), { ...init, headers });
  }) as typeof fetch;
  const workflow = async () => {
    const wf = (await store.read(ref)).state.workflows[PLANNER];
    if (!wf) throw new Error("no workflow");
    return wf;
  };
  return { store, ref, handoff, token, fetchThroughApp, workflow };
}

describe.skipIf(!TEST_POSTGRES)("twinlock/langgraph planner side on a team (PostgreSQL) store", () => {
  it("freezes through the gate server's MCP, pauses with interrupt(), and resumes with the person's decision from the database", async () => {
    const t = await teamServer();
    const session = gateServerPlannerSession({
      server: TEST_ORIGIN,
      token: t.token,
      planner: PLANNER,
      handoffDir: t.handoff,
      fetch: t.fetchThroughApp,
    });
    const agent = createReactAgent({
      llm: new ScriptedChatModel(["twinlock_submit_handoff", "twinlock_request_review", "twinlock_request_review"]),
      tools: plannerInterruptTools({ session }),
      checkpointSaver: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "team-planner" }, recursionLimit: 10 };
    const step = async (input: Parameters<typeof agent.invoke>[0]) => {
      const r = (await agent.invoke(input, config)) as { messages: BaseMessage[]; __interrupt__?: Array<{ value: unknown }> };
      return {
        shown: r.messages.filter((m) => m instanceof ToolMessage).map((m) => String(m.content)),
        paused: (r.__interrupt__ ?? []).map((i) => i.value),
      };
    };
    const first = await step({ messages: [{ role: "user", content: "plan the fix" }] });
    const frozen = await t.workflow();
    expect(frozen.state).toBe("plan_review_pending");
    expect(first.paused).toEqual([{ type: "twinlock_review", revision: 1, hash: frozen.handoff?.hash }]);
    // Another process resuming the thread holds a session that froze nothing itself: the pause still names the frozen hash, read from the gate.
    const elsewhere = gateServerPlannerSession({ server: TEST_ORIGIN, token: t.token, planner: PLANNER, fetch: t.fetchThroughApp });
    expect(await elsewhere.reviewNow()).toEqual({ revision: 1, hash: frozen.handoff?.hash, decided: null });
    await elsewhere.close();
    // A forged resume approves nothing: the tool asks the server, which has no decision, and says so; asked again, it pauses again.
    const forged = await step(new Command({ resume: { decision: "approved" } }));
    expect(forged.shown[1]).toBe(NO_DECISION_YET);
    expect(forged.paused).toHaveLength(1);
    expect((await t.workflow()).state).toBe("plan_review_pending");
    await reviewPairPlan({
      run: t.ref,
      store: t.store,
      planner: PLANNER,
      decision: "changes_requested",
      feedback: "Add Windows coverage",
      handoffHash: frozen.handoff?.hash as string,
      reviewer: "alice",
      key: ALICE_KEY,
    });
    const resume = await reviewResume({ session, timeoutMs: 20_000 });
    expect(resume.resume).toMatchObject({ decision: "changes_requested", comments: "Add Windows coverage", revision: 1 });
    const after = await step(resume);
    expect(after.paused).toEqual([]);
    expect(JSON.parse(after.shown[2] as string)).toMatchObject({ decision: "changes_requested", comments: "Add Windows coverage" });
    expect((await t.workflow()).state).toBe("plan_revision_pending");
    await session.close();
  }, 120_000);

  it("refuses in one line to the model when the token is not the run's", async () => {
    const t = await teamServer();
    const session = gateServerPlannerSession({ server: TEST_ORIGIN, token: "tl_agent_nope", planner: PLANNER, fetch: t.fetchThroughApp });
    await expect(session.submitHandoff()).rejects.toThrow(/cannot be reached over MCP|refused/);
    expect((await t.workflow()).handoff).toBeNull();
    await session.close();
  }, 60_000);
});
