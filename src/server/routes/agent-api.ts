import { admit } from "../../gate/admit.js";
import { closeWorkflow } from "../../gate/close-workflow.js";
import { exportRun } from "../../gate/export-run.js";
import { freezePairHandoff } from "../../gate/freeze-pair-handoff.js";
import { pairStatusFromRun } from "../../gate/pair-status.js";
import { presentPlan } from "../../gate/present-plan.js";
import type { Workflow } from "../../run/run-schema.js";
import { type LoadedRun, serializeRunFile } from "../../store/run-file.js";
import { agentHandoffPath } from "../../store/run-store.js";
import { readTokenFreezeKey } from "../agent-tokens.js";
import { AdmissionCheckRequest, FreezeRequest, ResultRequest } from "../api-schemas.js";
import type { GateApp, GateContext } from "../gate-context.js";
import { HttpProblem } from "../http-problem.js";
import { otherRunFolders } from "../other-run-folders.js";
import { pagePaths } from "../page-views.js";
import { param, parseFields, promptParam, readFields } from "../request-fields.js";

/** A run's workflow of this planner, only as the run's own record (never a built-in member of the object). */
function ownWorkflow(run: LoadedRun, planner: string): Workflow | undefined {
  return Object.hasOwn(run.state.workflows, planner) ? run.state.workflows[planner] : undefined;
}

/** The JSON API's reading routes (agents with a token, or reviewers): the run list, a run, a pair's status, its plan, the export. */
export function addAgentReadRoutes(app: GateApp, ctx: GateContext): void {
  const { store, now } = ctx;
  app.get("/api/runs", async (c) => {
    const p = c.get("principal");
    if (p.kind === "anonymous") throw new HttpProblem(401, "SIGN_IN", "sign in with your passkey, or send an agent token");
    const listings = await store.list();
    const visible = p.kind === "agent" ? listings.filter((l) => l.run_id === p.token.run_id) : listings;
    return c.json({ ok: true, runs: visible.map((l) => ({ run_id: l.run_id, revision: l.revision, updated_at: l.updated_at })) });
  });
  app.get("/api/runs/:runId", async (c) => {
    ctx.requireReader(c, "status", param(c, "runId"));
    const { run } = await ctx.findRun(param(c, "runId"));
    const p = c.get("principal");
    // A token for one pair sees only that pair of the run.
    const only = p.kind === "agent" ? p.token.planner : null;
    const state =
      only === null
        ? run.state
        : { ...run.state, workflows: Object.fromEntries(Object.entries(run.state.workflows).filter(([planner]) => planner === only)) };
    return c.json({ ok: true, run_id: run.state.run_id, revision: run.file.revision, state });
  });
  app.get("/api/runs/:runId/pairs/:planner", async (c) => {
    ctx.requireReader(c, "status", param(c, "runId"), promptParam(c, "planner"));
    const { ref, run } = await ctx.findRun(param(c, "runId"));
    return c.json({ ok: true, status: await pairStatusFromRun(store, ref, promptParam(c, "planner"), now(), run) });
  });
  app.get("/api/runs/:runId/pairs/:planner/plan", async (c) => {
    ctx.requireReader(c, "present", param(c, "runId"), promptParam(c, "planner"));
    const { ref } = await ctx.findRun(param(c, "runId"));
    const revision = c.req.query("revision");
    const p = await presentPlan(store, ref, promptParam(c, "planner"), revision ? { revision: Number(revision) } : {});
    return c.json({ ok: true, plan: p });
  });
  // The gate's own word for a run, for CI: its head signed as an export, with a CI token (`token create --ci`) or a session.
  app.get("/api/runs/:runId/export", async (c) => {
    ctx.requireReader(c, "export", param(c, "runId"));
    const { ref } = await ctx.findRun(param(c, "runId"));
    const { exported } = await exportRun(store, ref);
    return c.body(serializeRunFile(exported), 200, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  });
}

/** The JSON API's agent actions: freeze a pair's handoff, ask whether an executor would be admitted, report a result. */
export function addAgentActionRoutes(app: GateApp, ctx: GateContext): void {
  const { store, home, now, config } = ctx;
  app.post("/api/runs/:runId/pairs/:planner/freeze", async (c) => {
    ctx.requireReader(c, "freeze", param(c, "runId"), promptParam(c, "planner"));
    const body = parseFields(FreezeRequest, await readFields(c));
    const { ref, run } = await ctx.findRun(param(c, "runId"));
    const actor = ctx.actorOf(c);
    const p = c.get("principal");
    const frozenBefore = ownWorkflow(run, promptParam(c, "planner"))?.handoff?.dir;
    // A token made with --freeze-key signs the freeze with the planner's key the gate home keeps (signing suites need one).
    const key = p.kind === "agent" ? readTokenFreezeKey(home, p.token) : undefined;
    // Every freeze over the API is bounded, the folder named or the one frozen before (re-resolved, it could lead elsewhere now).
    const handoff = agentHandoffPath(store, ref, body.handoff_dir, {
      runId: run.state.run_id,
      frozenBefore,
      suiteRoot: run.state.suite.root,
      handoffRoot: config.handoffRoot,
      otherRunFolders: await otherRunFolders(store, ref),
    });
    // With a key the freeze is recorded as the key's owner (the suite lists who may freeze).
    const r = await freezePairHandoff({
      store,
      run: ref,
      planner: promptParam(c, "planner"),
      handoffDir: handoff.dir,
      confine: handoff.confine,
      actor: key ? undefined : actor,
      key,
      unchangedBecause: body.unchanged_because,
      now,
    });
    // The new revision's records are read and cut now, in the agent's turn off the thread, so the reviewer's first look finds them ready.
    presentPlan(store, ref, r.workflow.planner).catch(() => undefined);
    const runId = param(c, "runId");
    return c.json({
      ok: true,
      state: r.workflow.state,
      revision: r.workflow.revision,
      hash: r.hash,
      review_url: `${config.origin}${pagePaths.revision(runId, r.workflow.planner, r.workflow.revision)}`,
    });
  });
  app.post("/api/runs/:runId/executors/:executor/admission-check", async (c) => {
    const runId = param(c, "runId");
    const executor = promptParam(c, "executor");
    // Who asks, and for which run, before the run is read: an anonymous caller or another run's token learns nothing of it.
    ctx.requireReader(c, "admission_check", runId);
    const body = parseFields(AdmissionCheckRequest, await readFields(c));
    const { ref, run } = await ctx.findRun(runId);
    const wf = Object.values(run.state.workflows).find((w) => w.executor === executor);
    ctx.requireReader(c, "admission_check", runId, wf?.planner ?? body.planner);
    const r = await admit({
      store,
      run: ref,
      executor,
      planner: body.planner,
      mode: body.mode,
      environment: body.environment,
      actions: body.actions,
      dry: true,
      actor: ctx.actorOf(c),
      now,
    });
    return c.json({ ok: true, would_admit: r.admitted, checks: r.checks, unsigned: r.unsigned });
  });
  app.post("/api/runs/:runId/pairs/:planner/result", async (c) => {
    const who = ctx.requireReader(c, "result", param(c, "runId"), promptParam(c, "planner"));
    const body = parseFields(ResultRequest, await readFields(c));
    const { ref } = await ctx.findRun(param(c, "runId"));
    const r = await closeWorkflow({
      store,
      run: ref,
      planner: promptParam(c, "planner"),
      result: body.result,
      residual: body.residual,
      actor: ctx.actorOf(c),
      // An agent token's close is the agent's report, never verified: that is a person's call.
      report: who.kind === "agent",
      now,
    });
    return c.json({ ok: true, state: r.workflow.state });
  });
}

/** MCP over Streamable HTTP, for agents' tokens only (the same tools as `twinlock mcp`). */
export function addMcpRoute(app: GateApp, ctx: GateContext): void {
  const { store, home, config } = ctx;
  app.all("/mcp", async (c) => {
    const p = c.get("principal");
    if (p.kind !== "agent")
      throw new HttpProblem(401, "AGENT_TOKEN", "the MCP endpoint is for agents: send `Authorization: Bearer <agent token>`");
    // The run is resolved, not read: each tool checks its scope before it reads the run.
    const ref = await store.resolve(p.token.run_id);
    if (ref === undefined) throw new HttpProblem(404, "UNKNOWN_RUN", `no run ${p.token.run_id} in ${store.label}`);
    const { serveMcpOverHttp } = await import("../../mcp/serve-mcp-over-http.js");
    return serveMcpOverHttp(c.req.raw, {
      store,
      waitStore: config.store,
      token: p.token,
      ref,
      origin: config.origin,
      freezeKey: readTokenFreezeKey(home, p.token),
      handoffRoot: config.handoffRoot,
    });
  });
}
