/**
 * After `close` recorded the executed change, the executed revision's page
 * shows the plan beside what was done, each deviation said in words.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admit } from "../gate/admit.js";
import { closeWorkflow } from "../gate/close-workflow.js";
import {
  call,
  EXECUTOR,
  freezeApproveConsent,
  PLANNER,
  type Reviewer,
  removeServerWorlds,
  reviewerFor,
  type ServerWorld,
  serverWorld,
} from "../test-support/gate-server-fixture.js";

let w: ServerWorld;
let alice: Reviewer;

beforeAll(async () => {
  w = await serverWorld({ config: { insecureHttp: false } });
  alice = await reviewerFor(w, "alice");
  await freezeApproveConsent(w, alice);
  const admitted = await admit({ store: w.store, run: w.runFile, executor: EXECUTOR, actor: "executor-agent" });
  expect(admitted.admitted, JSON.stringify(admitted.checks.filter((c) => !c.ok))).toBe(true);
  // The executor wrote the test (A1), never touched cart/cache.go (A2), edited a CI file, and ran no check for V2.
  await closeWorkflow({
    run: w.runFile,
    store: w.store,
    planner: PLANNER,
    result: "failed",
    residual: "A2 not done, V2 not run, a CI file edited",
    actor: "executor-agent",
    executed: {
      changed: [
        { path: "cart/cache_race_test.go", sha256: `sha256:${"a".repeat(64)}` },
        { path: ".github/ci.yml", sha256: `sha256:${"b".repeat(64)}` },
      ],
      criteria: [{ id: "V1", result: "passed", command: "go test -run TestCartCacheRace ./cart/" }],
      root: w.dir,
    },
  });
});
afterAll(removeServerWorlds);

describe("the executed revision's page after close", () => {
  it("shows the plan versus execution: the action not done, the file outside the plan, the criterion without evidence", async () => {
    const r = await call(w, `/runs/${w.runId}/pairs/${PLANNER}/revisions/1`, { cookie: alice.cookie, headers: { accept: "text/html" } });
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(html).toContain(`<h2 id="execution-h">Plan versus execution</h2>`);
    expect(html).toContain("3 deviations from the approved plan.");
    expect(html).toMatch(
      /<code>\+ACTION:A2<\/code><\/th><td><code>cart\/cache\.go:80-95<\/code><\/td><td><strong[^>]*><span aria-hidden="true">✗<\/span> not done/,
    );
    expect(html).toMatch(
      /<code>\.github\/ci\.yml<\/code> <code class="hash">sha256:b+<\/code> <strong[^>]*><span aria-hidden="true">✗<\/span> outside the plan/,
    );
    expect(html).toMatch(/<code>=VERIFY:V2<\/code><\/th><td><strong[^>]*><span aria-hidden="true">✗<\/span> no evidence/);
    expect(html).toMatch(/<code>\+ACTION:A1<\/code>.*✓<\/span> done/);
  });
});
