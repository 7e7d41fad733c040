import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { PlannerSession, ReviewOutcome, SubmittedHandoff } from "./planner-session.js";

/** Longest one wait call asks the server for (its own cap is 120 s; a shorter call keeps proxies' idle timeouts away). */
const WAIT_SECONDS = 50;

export interface GateServerPlannerOptions {
  /** The gate server's origin (`twinlock serve`), e.g. https://gate.example:7420. */
  server: string;
  /** The planner agent's token for its run (`twinlock token create --run RUN_ID --planner PLANNER`): its scopes, not this code, bound what it may do. */
  token: string;
  /** The planner prompt whose handoff is frozen (e.g. "MD-29"). */
  planner: string;
  /** The handoff folder to freeze (the server bounds it: its handoff root, or the folder frozen before). */
  handoffDir?: string;
  /** The fetch the MCP client uses (default: the global one). */
  fetch?: typeof fetch;
}

/**
 * A planner's session on a team (PostgreSQL) store, for the adapters'
 * planner tools: the agent's process holds no database credentials, so it
 * freezes and waits through the gate server's MCP endpoint with its agent
 * token (`twinlock_submit_handoff`, `twinlock_wait_for_review`), as any MCP
 * agent does. Like the folder store's session it offers no way to review,
 * consent or approve; the token cannot either.
 */
export function gateServerPlannerSession(o: GateServerPlannerOptions): PlannerSession & { close(): Promise<void> } {
  return mcpPlannerSession({
    where: `the gate server ${o.server}`,
    planner: o.planner,
    handoffDir: o.handoffDir,
    transport: () =>
      new StreamableHTTPClientTransport(new URL("/mcp", o.server), {
        fetch: o.fetch,
        requestInit: { headers: { authorization: `Bearer ${o.token}` } },
      }),
  });
}

/**
 * A planner's session through any twinlock MCP server: `transport` makes
 * the connection (the gate server's `/mcp`, or `plan`'s relay socket);
 * `where` names that server in refusals. It freezes with
 * `twinlock_submit_handoff` and waits with `twinlock_wait_for_review`, and
 * offers no way to review, consent or approve.
 */
export function mcpPlannerSession(o: {
  where: string;
  planner: string;
  handoffDir?: string;
  transport: () => Transport;
}): PlannerSession & { close(): Promise<void> } {
  let connected: Promise<Client> | undefined;
  let lastHash = "";
  const client = () => {
    connected ??= (async () => {
      const c = new Client({ name: "twinlock-adapter", version: "1" });
      await c.connect(o.transport());
      return c;
    })().catch((error: unknown) => {
      connected = undefined;
      throw new Error(`${o.where} cannot be reached over MCP (${(error as Error)?.message ?? error})`);
    });
    return connected;
  };
  const callTool = async (name: string, args: Record<string, unknown>, signal?: AbortSignal) => {
    const r = await (await client()).callTool({ name, arguments: args }, undefined, { signal, timeout: (WAIT_SECONDS + 30) * 1000 });
    const text = Array.isArray(r.content) ? r.content.map((c) => (c as { text?: string }).text ?? "").join(" ") : "";
    if (r.isError) throw new Error(`${o.where} refused ${name}: ${text.slice(0, 500)}`);
    return (r.structuredContent ?? {}) as Record<string, unknown>;
  };
  /** One wait call: the decision, or undefined when the server's wait ran out. */
  const waitOnce = async (seconds: number, signal?: AbortSignal) => {
    const d = await callTool("twinlock_wait_for_review", { planner: o.planner, timeout_seconds: seconds }, signal);
    if (d.status === "finished") throw new Error(`${o.planner} is ${String(d.state)}, with no decision of a person to wait for`);
    if (d.status !== "decided") return { revision: Number(d.revision), hash: String(d.hash ?? ""), state: String(d.state), decided: null };
    const p = d.decision as { decision: ReviewOutcome["decision"]; revision: number; handoff_hash: string; feedback: string | null };
    const decided: ReviewOutcome = {
      decision: p.decision,
      revision: p.revision,
      hash: p.handoff_hash,
      comments: p.feedback,
      state: String(d.state),
    };
    return { revision: p.revision, hash: p.handoff_hash, state: decided.state, decided };
  };
  return {
    async submitHandoff(s = {}): Promise<SubmittedHandoff> {
      const d = await callTool("twinlock_submit_handoff", {
        planner: o.planner,
        ...(o.handoffDir === undefined ? {} : { handoff_dir: o.handoffDir }),
        ...(s.unchangedBecause === undefined ? {} : { unchanged_because: s.unchangedBecause }),
      });
      lastHash = String(d.hash);
      return { hash: lastHash, revision: Number(d.revision), state: String(d.state) };
    },
    async waitForReview(w = {}) {
      const started = Date.now();
      for (;;) {
        const left = w.timeoutMs === undefined ? WAIT_SECONDS * 1000 : w.timeoutMs - (Date.now() - started);
        const r = await waitOnce(Math.max(1, Math.min(WAIT_SECONDS, Math.ceil(left / 1000))), w.signal);
        if (r.decided) return r.decided;
        if (w.signal?.aborted) throw new Error("waiting for the review was cancelled");
        if (w.timeoutMs !== undefined && Date.now() - started >= w.timeoutMs)
          throw new Error(`no person decided on revision ${r.revision} within ${w.timeoutMs} ms; wait again`);
      }
    },
    /** End the MCP connection (a later call opens a new one). */
    async close() {
      const c = connected;
      connected = undefined;
      await (await c?.catch(() => undefined))?.close();
    },
    async reviewNow() {
      // The shortest wait the server takes (1 s) stands for a look.
      const r = await waitOnce(1);
      return { revision: r.revision, hash: r.hash || lastHash, decided: r.decided };
    },
  };
}
