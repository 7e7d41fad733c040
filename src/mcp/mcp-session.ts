import type { KeyObject } from "node:crypto";
import { z } from "zod";
import { ERROR_CODES, type ErrorKind, isErrorCode } from "../errors/error-codes.js";
import { IntegrityError } from "../errors/errors.js";
import { redactSecrets } from "../errors/redact-secrets.js";
import { promptId } from "../run/run-schema.js";
import type { TokenScope } from "../server/agent-tokens.js";
import { describePublicProblem, homeFolders } from "../server/http-problem.js";
import { tokenRefusalError } from "../server/token-refusal.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";

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
  /** The one folder this session freezes (a planner's session under `twinlock plan`: its bound handoff folder), on either store. */
  sessionHandoff?: string;
  /** The store a long wait re-reads (the gate server's own, not its once-per-request copy); default `store`. */
  waitStore?: RunStore;
  /** The review page of a revision, when a gate server serves this home; null over stdio without one. */
  reviewUrl: (planner: string, revision: number) => string | null;
}

/** What every tool, resource and prompt of one session is given: the context, its run read and held to its ID, and the scope check. */
export interface McpSession {
  ctx: McpGateContext;
  /** The session's run, read (once per request on the server) and held to its ID: a run file swapped in under it is not this run. */
  readOwnRun(): Promise<LoadedRun>;
  /** Refuses unless the session has `scope` (and, given a planner, is for that pair or every pair). */
  need(scope: TokenScope, planner?: string): void;
}

/** The session over `ctx`. */
export function createMcpSession(ctx: McpGateContext): McpSession {
  return {
    ctx,
    async readOwnRun() {
      const run = await ctx.store.read(ctx.ref);
      if (run.state.run_id !== ctx.runId)
        throw new IntegrityError(`the run file recorded for ${ctx.runId} now holds run ${run.state.run_id}`);
      return run;
    },
    need(scope, planner) {
      if (!ctx.scopes.includes(scope))
        throw tokenRefusalError({ code: "TOKEN_SCOPE", missing: "scope", scope, token_scopes: ctx.scopes.join(",") });
      if (planner !== undefined && ctx.planner !== null && planner !== ctx.planner)
        throw tokenRefusalError({ code: "TOKEN_PAIR", missing: "pair", planner, token_planner: ctx.planner });
    },
  };
}

/** A prompt-ID argument with the description the agent reads (a described copy, as classic zod's `.describe` makes). */
export const promptIdArg = (description: string) => promptId.clone().register(z.globalRegistry, { description });
/** The planner argument every pair tool takes. */
export const plannerArg = promptIdArg("the planner prompt's ID (e.g. MD-29)");

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
export async function redactedThrow<T>(ctx: Pick<McpGateContext, "store">, work: () => Promise<T>): Promise<T> {
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
