import "../schemas/zod-setup.js";
import type { KeyObject } from "node:crypto";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { ERROR_CODES, type ErrorKind, isErrorCode } from "../errors/error-codes.js";
import { IntegrityError, RefusalError } from "../errors/errors.js";
import { redactSecrets } from "../errors/redact-secrets.js";
import { admit } from "../gate/admit.js";
import { closeWorkflow } from "../gate/close-workflow.js";
import { freezePairHandoff } from "../gate/freeze-pair-handoff.js";
import { loadRunSuite } from "../gate/load-run-suite.js";
import { pairStatusFromRun } from "../gate/pair-status.js";
import { presentPlan } from "../gate/present-plan.js";
import { loadPinnedPolicy } from "../home/suite-pins.js";
import { shellQuote } from "../run/next-step.js";
import { heldReceipts, RECEIPT_ROWS, type ReceiptKind } from "../run/receipt-kinds.js";
import { promptId, type RunState } from "../run/run-schema.js";
import type { TokenScope } from "../server/agent-tokens.js";
import { AdmissionCheckRequest, FreezeRequest, ResultRequest } from "../server/api-schemas.js";
import { describePublicProblem, homeFolders } from "../server/http-problem.js";
import { otherRunFolders } from "../server/other-run-folders.js";
import { agentHandoffPath, type RunStore } from "../store/run-store.js";
import { VERSION } from "../version.js";
import { liveHandoffReadiness } from "./live-handoff-source.js";
import { registerWaitForDecisionTool } from "./wait-for-decision-tool.js";

/** What the agent may report of its work: any ending but verified, which is a person's call on the executed change. */
const AgentResultReport = ResultRequest.extend({ result: z.enum(["failed", "rolled_back", "abandoned"]) });

/** What one MCP session may reach: one run (and perhaps one pair), some scopes, an actor name for the log. */
export interface McpGateContext {
  store: RunStore;
  /** The run as the store names it (the folder store: the run file's path). */
  ref: string;
  runId: string;
  /** Only this pair, when the token says so. */
  planner: string | null;
  scopes: readonly TokenScope[];
  actor: string;
  /** A planner key with the freeze right, for signing suites (stdio: `--key`; HTTP: the token's freeze key). */
  freezeKey?: KeyObject;
  /** For a store whose runs are not files: the folder first freezes must be inside (the gate server's --handoff-root). */
  handoffRoot?: string;
  /** The store a long wait re-reads (the gate server's own, not its once-per-request copy); default `store`. */
  waitStore?: RunStore;
  /** The review page of a revision, when a gate server serves this home; null over stdio without one. */
  reviewUrl: (planner: string, revision: number) => string | null;
}

/**
 * The field of the receipts resource each receipt kind is listed under, and
 * whether it is a list or the current one (src/receipt-kind-consumers.test.ts
 * holds the keys to RECEIPT_KINDS).
 */
export const MCP_RECEIPT_FIELDS: Record<ReceiptKind, { field: string; many: boolean }> = {
  freeze: { field: "freeze", many: false },
  review: { field: "reviews", many: true },
  consent: { field: "consents", many: true },
  apply_approval: { field: "apply_approvals", many: true },
  dry_run_result: { field: "dry_run_results", many: true },
  admission: { field: "admissions", many: true },
  stop_resolution: { field: "stop_resolutions", many: true },
};

/** The receipts resource: each pair (all, or only `planner`'s) with its receipts under MCP_RECEIPT_FIELDS, the run's stop lifts on every pair. */
export function receiptsByPair(state: RunState, planner: string | null): Array<Record<string, unknown>> {
  const held = heldReceipts(state);
  return Object.values(state.workflows)
    .filter((w) => planner === null || w.planner === planner)
    .map((w) => {
      const pair: Record<string, unknown> = { planner: w.planner, executor: w.executor };
      for (const row of RECEIPT_ROWS) {
        const { field, many } = MCP_RECEIPT_FIELDS[row.kind];
        const mine = held.filter(
          (h) => h.row.kind === row.kind && (h.planner === w.planner || (h.planner === null && row.kind === "stop_resolution")),
        );
        // The consent as replay keeps it, with the home's consumed_at (what this resource always showed).
        const shown = row.kind === "consent" ? w.consents : mine.map((h) => h.receipt);
        pair[field] = many ? shown : (shown[shown.length - 1] ?? null);
      }
      return pair;
    });
}

/**
 * The names of every tool the MCP server offers. None reviews, consents,
 * approves an apply, lifts a stop, pins, enrols or signs with a reviewer's
 * key: a test lists the server's tools and fails on any such capability.
 */
export const MCP_TOOLS = [
  "twinlock_status",
  "twinlock_readiness",
  "twinlock_submit_handoff",
  "twinlock_request_review",
  "twinlock_check_admission",
  "twinlock_report_result",
  "twinlock_wait_for_review",
] as const;

/** A prompt-ID argument with the description the agent reads (a described copy, as classic zod's `.describe` makes). */
const promptIdArg = (description: string) => promptId.clone().register(z.globalRegistry, { description });
export const plannerArg = promptIdArg("the planner prompt's ID (e.g. MD-29)");

/**
 * An MCP server for the agent's side of the gate (SPEC §11), over whatever
 * transport the caller connects (stdio from `twinlock mcp`, Streamable HTTP
 * from `twinlock serve` with an agent token). Every tool calls the same
 * library function as the CLI and the JSON API, and answers with data plus
 * one line for the model; a refusal is a tool error with its stable code.
 */
export function createTwinlockMcpServer(ctx: McpGateContext): McpServer {
  const server = new McpServer(
    { name: "twinlock", version: VERSION },
    {
      instructions:
        "twinlock gates execution: freeze your plan (twinlock_submit_handoff), ask a person to review it (twinlock_request_review), and check whether the executor would be admitted (twinlock_check_admission). Only a person can review, approve and consent; no tool here can.",
    },
  );
  /** The session's run, read (once per request on the server) and held to its ID: a run file swapped in under it is not this run. */
  const readOwnRun = async () => {
    const run = await ctx.store.read(ctx.ref);
    if (run.state.run_id !== ctx.runId)
      throw new IntegrityError(`the run file recorded for ${ctx.runId} now holds run ${run.state.run_id}`);
    return run;
  };
  const need = (scope: TokenScope, planner?: string) => {
    if (!ctx.scopes.includes(scope)) throw new RefusalError(`this session does not have the ${scope} scope`, { code: "TOKEN_SCOPE" });
    if (planner !== undefined && ctx.planner !== null && planner !== ctx.planner)
      throw new RefusalError(`this session is for ${ctx.planner}, not ${planner}`, { code: "TOKEN_PAIR" });
  };

  server.registerTool(
    "twinlock_status",
    {
      title: "Pair status",
      description: "The state of one pair of the run (or every pair): revision, frozen hash, the next step, open stops. Read-only.",
      inputSchema: { planner: z.optional(plannerArg) },
      annotations: { readOnlyHint: true },
    },
    async ({ planner }) =>
      answer(ctx, async () => {
        need("status", planner);
        const run = await readOwnRun();
        const planners = planner ? [planner] : Object.keys(run.state.workflows).filter((p) => ctx.planner === null || p === ctx.planner);
        const statuses = [];
        for (const p of planners) statuses.push(await pairStatusFromRun(ctx.store, ctx.ref, p, new Date(), run));
        return {
          text: statuses.map((s) => `${s.planner}→${s.executor}: ${s.state}, revision ${s.revision}; next: ${s.next_action}`).join("\n"),
          data: { statuses },
        };
      }),
  );

  server.registerTool(
    "twinlock_readiness",
    {
      title: "Handoff readiness",
      description:
        "Check the live handoff folder against the pinned suite's handoff format before freezing: every problem, by file and record. Read-only.",
      inputSchema: { planner: plannerArg, handoff_dir: FreezeRequest.shape.handoff_dir },
      annotations: { readOnlyHint: true },
    },
    async ({ planner, handoff_dir }) =>
      answer(ctx, async () => {
        need("status", planner);
        const run = await readOwnRun();
        const wf = Object.hasOwn(run.state.workflows, planner) ? run.state.workflows[planner] : undefined;
        if (!(handoff_dir ?? wf?.handoff?.dir))
          throw new RefusalError(`give handoff_dir: ${planner} has no frozen handoff yet to take the folder from`, { code: "BAD_INPUT" });
        const policy = loadPinnedPolicy(ctx.store.home, run.state.suite);
        const handoff = agentHandoffPath(ctx.store, ctx.ref, handoff_dir, {
          runId: run.state.run_id,
          frozenBefore: wf?.handoff?.dir,
          suiteRoot: run.state.suite.root,
          handoffRoot: ctx.handoffRoot,
          otherRunFolders: await otherRunFolders(ctx.store, ctx.ref),
        });
        // Judged in place, not on a copy: the real path is resolved and confined once, and every file is read beneath
        // it on a worker thread, so a link swapped in meanwhile leads nowhere and no handoff holds the server.
        const report = await liveHandoffReadiness(ctx.store.home, handoff.dir, handoff.confine, policy.handoffFormat);
        return {
          text: report.ready
            ? `ready: ${report.dir}`
            : `not ready (${report.problems.length} problems): ${report.problems
                .slice(0, 10)
                .map((p) => `${p.file}: ${p.message}`)
                .join("; ")}`,
          data: { ready: report.ready, problems: report.problems },
        };
      }),
  );

  server.registerTool(
    "twinlock_submit_handoff",
    {
      title: "Freeze the handoff",
      description:
        "Freeze the planner's handoff folder (a relative handoff_dir is taken from the run file's folder): the gate copies and hashes every file; the reviewer is shown exactly these bytes. Returns the hash and revision.",
      inputSchema: { planner: plannerArg, ...FreezeRequest.shape },
    },
    async ({ planner, handoff_dir, unchanged_because }) =>
      answer(ctx, async () => {
        need("freeze", planner);
        const current = await readOwnRun();
        // Every freeze is bounded, the folder named or the one frozen before (re-resolved, it could lead elsewhere now).
        const handoff = agentHandoffPath(ctx.store, ctx.ref, handoff_dir, {
          runId: current.state.run_id,
          frozenBefore: Object.hasOwn(current.state.workflows, planner) ? current.state.workflows[planner]?.handoff?.dir : undefined,
          suiteRoot: current.state.suite.root,
          handoffRoot: ctx.handoffRoot,
          otherRunFolders: await otherRunFolders(ctx.store, ctx.ref),
        });
        const key = ctx.freezeKey;
        const r = await freezePairHandoff({
          store: ctx.store,
          run: ctx.ref,
          planner,
          handoffDir: handoff.dir,
          confine: handoff.confine,
          actor: key ? undefined : ctx.actor,
          key,
          unchangedBecause: unchanged_because,
        });
        const url = ctx.reviewUrl(planner, r.revision);
        return {
          text: `froze revision ${r.revision} of ${planner}: ${r.hash}; state ${r.workflow.state}. Ask a person to review it (twinlock_request_review).`,
          data: { hash: r.hash, revision: r.revision, state: r.workflow.state, review_url: url },
        };
      }),
  );

  server.registerTool(
    "twinlock_request_review",
    {
      title: "Ask a person to review",
      description:
        "The review page of the current frozen revision and the exact command a person runs in a terminal. Only a person can review; this only tells you what to hand them.",
      inputSchema: { planner: plannerArg },
      annotations: { readOnlyHint: true },
    },
    async ({ planner }) =>
      answer(ctx, async () => {
        need("present", planner);
        const run = await readOwnRun();
        const wf = Object.hasOwn(run.state.workflows, planner) ? run.state.workflows[planner] : undefined;
        if (!wf?.handoff)
          throw new RefusalError(`${planner} has nothing frozen to review; freeze it first (twinlock_submit_handoff)`, {
            code: "NOT_FROZEN",
          });
        const url = ctx.reviewUrl(planner, wf.revision);
        const command = `twinlock present ${shellQuote(ctx.ref)} ${planner}   # then: twinlock review-pair-plan ${shellQuote(ctx.ref)} ${planner} --decision approved --handoff-hash ${wf.handoff.hash} --key FILE`;
        return {
          text: `Ask a person to review revision ${wf.revision} of ${planner} (${wf.handoff.hash})${url ? ` at ${url}` : ""}, or in a terminal: ${command}`,
          data: { revision: wf.revision, hash: wf.handoff.hash, review_url: url, command },
        };
      }),
  );

  server.registerTool(
    "twinlock_check_admission",
    {
      title: "Would the executor be admitted?",
      description: "Every admission check for the executor, now, without recording anything or using the consent.",
      inputSchema: { executor: promptIdArg("the executor prompt's ID (e.g. MD-30)"), ...AdmissionCheckRequest.shape },
      annotations: { readOnlyHint: true },
    },
    async ({ executor, planner, mode, environment, actions }) =>
      answer(ctx, async () => {
        // The scope before the run is read; the pair once the run says whose executor this is.
        need("admission_check");
        const run = await readOwnRun();
        const wf = Object.values(run.state.workflows).find((w) => w.executor === executor);
        need("admission_check", wf?.planner ?? planner);
        const r = await admit({
          store: ctx.store,
          run: ctx.ref,
          executor,
          planner,
          mode,
          environment,
          actions,
          dry: true,
          actor: ctx.actor,
        });
        const failed = r.checks.filter((c) => !c.ok);
        return {
          text: r.admitted
            ? `${executor} would be admitted (every check passes)`
            : `${executor} would NOT be admitted: ${failed.map((c) => `${c.name}: ${c.detail}`).join("; ")}`,
          data: { would_admit: r.admitted, checks: r.checks, unsigned: r.unsigned },
        };
      }),
  );

  server.registerTool(
    "twinlock_report_result",
    {
      title: "Report the result",
      description:
        "Report that the work did not end as planned: failed or rolled_back after execution, abandoned or failed before it, with what was left undone. This is your report, recorded as a close made by you (the log names you), never as verified: verifying the work is a person's call on the executed change (`twinlock close RUN ID --result verified --git-range BASE...HEAD`). When the work is done, say so to the person and give them that command.",
      inputSchema: { planner: plannerArg, ...AgentResultReport.shape },
    },
    async ({ planner, result, residual }) =>
      answer(ctx, async () => {
        need("result", planner);
        const r = await closeWorkflow({ store: ctx.store, run: ctx.ref, planner, result, residual, actor: ctx.actor });
        return {
          text: `recorded your report: ${planner} closed ${result} by ${ctx.actor}; state ${r.workflow.state}`,
          data: { state: r.workflow.state, outcome: result, reported_by: ctx.actor },
        };
      }),
  );

  registerWaitForDecisionTool(server, ctx, need);

  server.registerResource(
    "frozen-plan",
    new ResourceTemplate("twinlock://runs/{runId}/pairs/{planner}/revisions/{revision}/plan", { list: undefined }),
    { title: "Frozen plan", description: "A revision's plan as the reviewer sees it, from the frozen bytes", mimeType: "text/markdown" },
    async (uri, vars) =>
      redactedThrow(ctx, async () => {
        const planner = String(vars.planner);
        need("present", planner);
        if (vars.runId !== ctx.runId) throw new RefusalError(`this session is for run ${ctx.runId}`, { code: "TOKEN_RUN" });
        const p = await presentPlan(ctx.store, ctx.ref, planner, { revision: Number(vars.revision) });
        return { contents: [{ uri: uri.href, mimeType: "text/markdown", text: p.markdown }] };
      }),
  );
  server.registerResource(
    "receipts",
    new ResourceTemplate("twinlock://runs/{runId}/receipts", { list: undefined }),
    {
      title: "Receipts",
      description:
        "Every receipt of the run, pair by pair (the freeze, reviews, consents, apply approvals, dry-run results, admissions and stop lifts), as JSON",
      mimeType: "application/json",
    },
    async (uri, vars) =>
      redactedThrow(ctx, async () => {
        need("status");
        if (vars.runId !== ctx.runId) throw new RefusalError(`this session is for run ${ctx.runId}`, { code: "TOKEN_RUN" });
        const run = await readOwnRun();
        const receipts = receiptsByPair(run.state, ctx.planner);
        return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(receipts, null, 1) }] };
      }),
  );

  server.registerPrompt(
    "twinlock_executor",
    {
      title: "The consented executor",
      description:
        "The text of exactly the executor a person consented to, found by the file digest the consent bound; nothing when there is no live consent.",
      argsSchema: { executor: z.string().describe("the executor prompt's ID") },
    },
    async ({ executor }) =>
      redactedThrow(ctx, async () => {
        need("status");
        const run = await readOwnRun();
        const wf = Object.values(run.state.workflows).find((w) => w.executor === executor);
        need("status", wf?.planner);
        const consent = wf?.consents[wf.consents.length - 1];
        if (!wf || !consent || consent.decision !== "approved" || consent.handoff_hash !== wf.handoff?.hash)
          throw new RefusalError(`${executor} has no live consent in run ${ctx.runId}; a person consents first`, { code: "NO_CONSENT" });
        const pinned = loadRunSuite(ctx.store.home, run.state, wf);
        const prompt = pinned.suite.prompts.find((p) => p.id === executor && p.sha256 === consent.executor_digest);
        if (!prompt)
          throw new RefusalError(
            `the executor file the consent bound (${consent.executor_digest}) is not in the pinned suite any more; it changed since consent`,
            {
              code: "EXECUTOR_CHANGED",
            },
          );
        return {
          description: `${prompt.id} (${prompt.title ?? prompt.id}), the exact file consented to (${consent.executor_digest})`,
          messages: [{ role: "user" as const, content: { type: "text" as const, text: prompt.body } }],
        };
      }),
  );
  return server;
}

/**
 * A tool's answer: one line for the model, and the data as structured
 * content. A refusal becomes a tool error with its stable code, redacted
 * (store URLs, key text, the gate home's folders) like every server answer.
 */
export async function answer(ctx: Pick<McpGateContext, "store">, work: () => Promise<{ text: string; data: Record<string, unknown> }>) {
  try {
    const { text, data } = await work();
    return { content: [{ type: "text" as const, text }], structuredContent: { ok: true, ...data } };
  } catch (error) {
    const folders = homeFolders(ctx.store.home);
    const { body, status } = describePublicProblem(error, folders);
    if (status === 500) process.stderr.write(redactSecrets(`twinlock mcp: internal error: ${(error as Error).stack}\n`, { folders }));
    return {
      isError: true,
      content: [{ type: "text" as const, text: `${body.code}: ${body.message}` }],
      structuredContent: body as unknown as Record<string, unknown>,
    };
  }
}

/** A resource's or prompt's work, whose refusal (sent as a protocol error) is redacted like a tool's. */
async function redactedThrow<T>(ctx: Pick<McpGateContext, "store">, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const { body, status } = describePublicProblem(error, homeFolders(ctx.store.home));
    if (status === 500)
      process.stderr.write(
        redactSecrets(`twinlock mcp: internal error: ${(error as Error).stack}\n`, { folders: homeFolders(ctx.store.home) }),
      );
    // The JSON-RPC error's code says the kind (MCP_ERRORS); the message keeps the twinlock code first.
    const kind: ErrorKind = isErrorCode(body.code) ? ERROR_CODES[body.code] : "internal";
    throw Object.assign(new Error(`${body.code}: ${body.message}`), { code: MCP_ERRORS[kind] });
  }
}

/**
 * MCP's one mapping from an error's kind (src/errors/error-codes.ts) to the
 * JSON-RPC error code a resource or prompt answers with (a tool answers
 * `isError` with the twinlock code instead): bad input is invalid params,
 * a real bug internal, and the gate's refusals codes of their own in the
 * range JSON-RPC leaves to servers (-32000 and -32001 are the SDK's).
 */
export const MCP_ERRORS: Record<ErrorKind, number> = {
  usage: -32602,
  refused: -32010,
  conflict: -32011,
  unavailable: -32012,
  integrity: -32013,
  internal: -32603,
};
