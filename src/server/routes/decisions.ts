import type { Context } from "hono";
import type { z } from "zod";
import { canonicalJson } from "../../crypto/canonical-hash.js";
import { approveApply } from "../../gate/approve-apply.js";
import { closeWorkflow } from "../../gate/close-workflow.js";
import { consentPairExecution } from "../../gate/consent-pair-execution.js";
import { raiseStop, resolveStop } from "../../gate/hard-stops.js";
import { reviewPairPlan } from "../../gate/review-pair-plan.js";
import { MAX_STOPS_PER_LIFT, type Workflow } from "../../run/run-schema.js";
import type { LoadedRun } from "../../store/run-file.js";
import { ApplyApprovalRequest, ConsentRequest, LiftStopRequest, ReviewRequest, StopRequest, VerifiedCloseRequest } from "../api-schemas.js";
import type { Env, GateApp, GateContext } from "../gate-context.js";
import { HttpProblem } from "../http-problem.js";
import { pagePaths } from "../page-views.js";
import { beginPasskeyDecision, completePasskeyDecision, type PasskeyDecision } from "../passkey-decisions.js";
import { emptyToUndefined, param, parseAssertion, parseFields, promptParam, readFields } from "../request-fields.js";
import type { ReviewerSession } from "../reviewer-sessions.js";
import { verifiedCloseFields } from "../verified-close-fields.js";

/** What a decision route builds from its request: the gate operation to sign, the request it binds, the right it needs, the answer. */
type DecisionBuilder = (
  c: Context<Env>,
  fields: Record<string, unknown>,
  session: ReviewerSession,
) => Promise<{ decision: PasskeyDecision; request: unknown; right?: string; done: (result: unknown) => Record<string, unknown> }>;

/** The two halves of a passkey decision on one path: `…/challenge` asks, the path itself completes. */
function addPasskeyRoute(app: GateApp, ctx: GateContext, pathPattern: string, build: DecisionBuilder): void {
  const { home, pending, rp, now } = ctx;
  app.post(`${pathPattern}/challenge`, async (c) => {
    const fields = await readFields(c);
    const session = await ctx.requireReviewer(c, fields);
    const d = await build(c, fields, session);
    if (d.right) await ctx.requireReviewer(c, fields, d.right);
    const challenge = await beginPasskeyDecision(d.decision, { home, session, request: d.request, pending, rp, now: now() });
    return c.json({ ok: true, ...challenge });
  });
  app.post(pathPattern, async (c) => {
    const fields = await readFields(c);
    const session = await ctx.requireReviewer(c, fields);
    const d = await build(c, fields, session);
    if (d.right) await ctx.requireReviewer(c, fields, d.right);
    const challengeId = typeof fields.challenge_id === "string" ? fields.challenge_id : "";
    const assertion = parseAssertion(fields.assertion);
    const result = await completePasskeyDecision(d.decision, {
      home,
      session,
      request: d.request,
      pending,
      rp,
      now: now(),
      challengeId,
      assertion,
    });
    return c.json({ ok: true, ...d.done(result) });
  });
}

/**
 * The answer to a decided pair: its state, the receipt, and the page to go on
 * to, which confirms the receipt of `kind` just recorded (`?recorded=`) when
 * the decision was on the revision that page shows.
 */
function decided(runId: string, wf: Workflow, receipt: unknown, kind: string): Record<string, unknown> {
  const revision = (receipt as { revision?: unknown } | null)?.revision;
  const location = wf.handoff
    ? `${pagePaths.revision(runId, wf.planner, wf.revision)}${revision === wf.revision ? `?recorded=${kind}` : ""}`
    : pagePaths.run(runId);
  return { state: wf.state, receipt, location };
}

/** A pair decision's answer from the gate operation's `{workflow, receipt}`. */
function decidedPair(runId: string, kind: string): (r: unknown) => Record<string, unknown> {
  return (r) => decided(runId, (r as { workflow: Workflow }).workflow, (r as { receipt: unknown }).receipt, kind);
}

/**
 * The JSON API's human decisions, each signed with the reviewer's passkey:
 * review, consent, apply approval, a verified close (the `verify` right),
 * raising and lifting stops.
 */
export function addDecisionRoutes(app: GateApp, ctx: GateContext): void {
  const { store } = ctx;
  addPasskeyRoute(app, ctx, "/api/runs/:runId/pairs/:planner/review", async (c, fields, session) => {
    const runId = param(c, "runId");
    const planner = promptParam(c, "planner");
    const body = parseFields(ReviewRequest, reviewFields(fields));
    const { ref } = await ctx.findRun(runId);
    return {
      right: "review",
      request: { op: "review", runId, planner, ...body },
      decision: {
        kind: "receipt",
        run: (key, at) =>
          reviewPairPlan({
            store,
            run: ref,
            planner,
            decision: body.decision,
            feedback: body.feedback,
            comments: body.comments,
            handoffHash: body.handoff_hash,
            executorDigest: body.executor_digest,
            reviewer: session.reviewer,
            key,
            now: at,
          }),
      },
      done: decidedPair(runId, "review"),
    };
  });
  addPasskeyRoute(app, ctx, "/api/runs/:runId/pairs/:planner/consent", async (c, fields, session) => {
    const runId = param(c, "runId");
    const planner = promptParam(c, "planner");
    const body = parseFields(ConsentRequest, consentFields(fields));
    const { ref, run } = await ctx.findRun(runId);
    requireShownSettings(run, body);
    return {
      right: "consent",
      request: { op: "consent", runId, planner, ...body },
      decision: {
        kind: "receipt",
        run: (key, at) =>
          consentPairExecution({
            store,
            run: ref,
            planner,
            approve: body.approve,
            handoffHash: body.handoff_hash,
            executorDigest: body.executor_digest,
            user: session.reviewer,
            key,
            expiresInMs: body.expires_in_minutes === undefined ? undefined : body.expires_in_minutes * 60_000,
            now: at,
          }),
      },
      done: decidedPair(runId, "consent"),
    };
  });
  addPasskeyRoute(app, ctx, "/api/runs/:runId/pairs/:planner/apply-approval", async (c, fields, session) => {
    const runId = param(c, "runId");
    const planner = promptParam(c, "planner");
    const body = parseFields(ApplyApprovalRequest, fields);
    const { ref } = await ctx.findRun(runId);
    return {
      right: "apply",
      request: { op: "apply", runId, planner, ...body },
      decision: {
        kind: "receipt",
        run: (key, at) =>
          approveApply({ store, run: ref, planner, approver: session.reviewer, handoffHash: body.handoff_hash, key, now: at }),
      },
      done: decidedPair(runId, "apply_approval"),
    };
  });
  addPasskeyRoute(app, ctx, "/api/runs/:runId/pairs/:planner/verified-close", async (c, fields, session) => {
    const runId = param(c, "runId");
    const planner = promptParam(c, "planner");
    const body = parseFields(VerifiedCloseRequest, verifiedCloseFields(fields));
    const { ref } = await ctx.findRun(runId);
    return {
      right: "verify",
      request: { op: "verified-close", runId, planner, ...body },
      decision: {
        kind: "receipt",
        run: (key, at) =>
          closeWorkflow({
            store,
            run: ref,
            planner,
            result: "verified",
            residual: body.residual,
            actor: session.reviewer,
            key,
            handoffHash: body.handoff_hash,
            executed: { changed: body.changed_files, criteria: body.criteria },
            now: at,
          }),
      },
      done: (r) => {
        const wf = (r as { workflow: Workflow }).workflow;
        return decided(runId, wf, wf.result?.receipt ?? null, "verification");
      },
    };
  });
  addStopRoutes(app, ctx);
}

/** Raising a stop (any signed-in reviewer, confirmed with the passkey) and lifting stops (the `stop` right, a signed receipt). */
function addStopRoutes(app: GateApp, ctx: GateContext): void {
  const { store } = ctx;
  addPasskeyRoute(app, ctx, "/api/runs/:runId/stops", async (c, fields, session) => {
    const runId = param(c, "runId");
    const body = parseFields(StopRequest, { ...fields, workflow: emptyToUndefined(fields.workflow), note: emptyToUndefined(fields.note) });
    const { ref } = await ctx.findRun(runId);
    return {
      request: { op: "stop", runId, ...body },
      decision: {
        kind: "confirm",
        run: (at) =>
          raiseStop({ store, run: ref, reason: body.reason, workflow: body.workflow, note: body.note, actor: session.reviewer, now: at }),
      },
      done: () => ({ state: "stopped", location: pagePaths.run(runId), receipt: null }),
    };
  });
  addPasskeyRoute(app, ctx, "/api/runs/:runId/stops/lift", async (c, fields, session) => {
    const runId = param(c, "runId");
    const body = parseFields(LiftStopRequest, {
      reason: fields.reason,
      workflow: emptyToUndefined(fields.workflow),
      stops: liftedStopsField(fields.stops),
      note: fields.note ?? fields.resolution,
    });
    const { ref } = await ctx.findRun(runId);
    return {
      right: "stop",
      request: { op: "lift", runId, ...body },
      decision: {
        kind: "receipt",
        run: (key, at) =>
          resolveStop({
            store,
            run: ref,
            reason: body.reason,
            workflow: body.workflow,
            stops: body.stops,
            note: body.note,
            actor: session.reviewer,
            key,
            now: at,
          }),
      },
      done: (r) => ({ state: "lifted", location: pagePaths.run(runId), receipt: (r as { receipt: unknown }).receipt }),
    };
  });
}

/**
 * The lift form's `stops` (comma-separated stop numbers) as the API's list; a
 * JSON list, or anything else, is left for the schema to judge.
 */
function liftedStopsField(value: unknown): unknown {
  if (typeof value !== "string" || value.length > 12 * MAX_STOPS_PER_LIFT) return value;
  const parts = value.split(",");
  return parts.every((p) => /^[1-9][0-9]{0,8}$/.test(p)) ? parts.map(Number) : value;
}

/** A form's comment field on a record: `comment:ID`. */
const COMMENT_FIELD = "comment:";
/** A form's comment on a file: `comment-file:PATH` holds the text, `comment-line:PATH` the line. */
const FILE_COMMENT_FIELD = "comment-file:";
const FILE_LINE_FIELD = "comment-line:";

/**
 * The review form's fields as the API's request: each non-empty `comment:ID`
 * and `comment-file:PATH` (with its `comment-line:PATH`) becomes one entry of
 * `comments`, in the form's order; a JSON request's `comments` is left as sent.
 */
function reviewFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const comments: Array<{ item: string; text: unknown }> = [];
  for (const [k, v] of Object.entries(fields)) {
    if (k.startsWith(COMMENT_FIELD)) {
      if (v !== "") comments.push({ item: k.slice(COMMENT_FIELD.length), text: v });
    } else if (k.startsWith(FILE_COMMENT_FIELD)) {
      const file = k.slice(FILE_COMMENT_FIELD.length);
      const line = fields[`${FILE_LINE_FIELD}${file}`];
      if (v !== "") comments.push({ item: `${file}:${typeof line === "string" && line !== "" ? line : "1"}`, text: v });
    } else if (!k.startsWith(FILE_LINE_FIELD)) out[k] = v;
  }
  if (comments.length > 0) out.comments = [...(Array.isArray(out.comments) ? out.comments : []), ...comments];
  if (out.feedback === "" && comments.length > 0) delete out.feedback;
  return out;
}

/** The consent form's fields as the API's request: `decision` approved/declined, numbers from text, empty meaning none. */
function consentFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...fields };
  if (typeof fields.decision === "string") {
    out.approve = fields.decision === "approved" ? true : fields.decision === "declined" ? false : fields.decision;
    delete out.decision;
  }
  for (const k of ["budget", "expires_in_minutes"]) {
    const v = fields[k];
    if (v === "") out[k] = k === "budget" ? null : undefined;
    else if (typeof v === "string") out[k] = /^\d{1,12}$/.test(v) ? Number(v) : v;
  }
  if (Array.isArray(fields.actions) && fields.actions.includes("all")) out.actions = "all";
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

/**
 * The consent binds the run's mode, environment, scope and budget. The form
 * repeats what it showed: a mismatch means the person saw something other
 * than what would be signed, and is refused.
 */
function requireShownSettings(run: LoadedRun, body: z.infer<typeof ConsentRequest>): void {
  const s = run.state.settings;
  const differs: string[] = [];
  if (body.mode !== undefined && body.mode !== s.mode) differs.push(`mode ${body.mode} (the run's is ${s.mode})`);
  if (body.environment !== undefined && body.environment !== s.environment)
    differs.push(`environment ${body.environment} (the run's is ${s.environment})`);
  if (body.actions !== undefined && canonicalJson(body.actions) !== canonicalJson(s.actions))
    differs.push(`actions ${JSON.stringify(body.actions)} (the run's are ${JSON.stringify(s.actions)})`);
  if (body.budget !== undefined && body.budget !== s.budget) differs.push(`budget ${body.budget} (the run's is ${s.budget})`);
  if (differs.length > 0)
    throw new HttpProblem(
      409,
      "SETTINGS_DIFFER",
      `consent binds the run's own settings; the form asked for ${differs.join(", ")}: start a new run for other settings`,
    );
}
