import type { KeyObject } from "node:crypto";
import { freezePairHandoff } from "../gate/freeze-pair-handoff.js";
import { type DecisionWait, MAX_WAIT_MS, waitForDecision } from "../gate/wait-for-decision.js";
import { folderRunStore } from "../home/folder-run-store.js";
import { openGateHome } from "../home/gate-home.js";
import type { SessionBinding } from "../home/session-binding.js";
import { verifyBinding } from "../hook/verify-binding.js";
import { mcpRelayHere } from "../sandbox/mcp-relay.js";
import type { RunStore } from "../store/run-store.js";
import { mcpPlannerSession } from "./gate-server-planner-session.js";
import { SocketClientTransport } from "./socket-mcp-transport.js";

export interface PlannerSessionOptions {
  /** The gate home the planner's session is bound in (`twinlock plan` sets TWINLOCK_HOME); named by the application. */
  home: string;
  /** The session's environment; by default a copy of process.env taken when the session is made. */
  env?: NodeJS.ProcessEnv;
  /**
   * The store to freeze in directly, bypassing `plan`'s relay (the caller's
   * own store; it must be able to write the gate home). Without it, a
   * session under `twinlock plan` freezes and waits through plan's MCP relay
   * (its socket mounted in the sandbox, else named by TWINLOCK_MCP_SOCKET),
   * and only outside `plan` opens the gate home's folder store.
   */
  store?: RunStore;
  /** A planner key with the `freeze` right, on suites that sign freezes (the direct store path only: plan's relay holds no key). */
  freezeKey?: KeyObject;
  /** How often waiting re-reads the run (default 1000 ms). */
  pollMs?: number;
}

/** What `submitHandoff` froze. */
export interface SubmittedHandoff {
  hash: string;
  revision: number;
  state: string;
}

/** A person's decision on the frozen revision, as `waitForReview` returns it to the planner's agent. */
export interface ReviewOutcome {
  decision: "approved" | "changes_requested" | "declined";
  revision: number;
  hash: string;
  /** The reviewer's comments (on changes_requested: what to change before re-freezing). */
  comments: string | null;
  /** The state the pair is in now. */
  state: string;
}

/** The planner side of every adapter: freeze, and wait for a person. It offers no way to review, consent or approve. */
export interface PlannerSession {
  submitHandoff(o?: { unchangedBecause?: string }): Promise<SubmittedHandoff>;
  waitForReview(o?: { signal?: AbortSignal; timeoutMs?: number }): Promise<ReviewOutcome>;
  /** The frozen revision awaiting review and a person's decision on it as the gate records it now (null: none yet), read once without waiting. */
  reviewNow(): Promise<{ revision: number; hash: string; decided: ReviewOutcome | null }>;
}

/** What the adapters' planner tools take: the folder store's session options, or a session already made (e.g. `gateServerPlannerSession` on a team store). */
export type PlannerSource = PlannerSessionOptions | { session: PlannerSession };

/** The session a PlannerSource names. */
export function sessionOf(source: PlannerSource): PlannerSession {
  return "session" in source ? source.session : plannerSession(source);
}

/** The text a planner tool answers the model with on a refusal: one line, never a stack. */
export function refusalText(error: unknown): string {
  return `twinlock: ${(error as Error)?.message ?? String(error)}`;
}

/**
 * A planner's session for an in-process agent started under `twinlock plan
 * RUN PLANNER --handoff DIR -- CMD`: `submitHandoff` freezes the session's own
 * handoff folder (the one the binding names: the agent cannot point it
 * elsewhere) exactly as `twinlock freeze` does; `waitForReview` resolves when
 * a person decides on that revision (in the browser or with
 * `review-pair-plan`), with the comments on "changes requested". Each call
 * re-verifies the binding first and throws (one line) when it does not hold.
 * Under `plan` (its relay socket here) and with no `store` given, it goes
 * through plan's relay instead (see relayPlannerSession).
 */
export function plannerSession(o: PlannerSessionOptions): PlannerSession {
  const env = { ...(o.env ?? process.env) };
  const relay = o.store === undefined ? mcpRelayHere(env) : undefined;
  if (relay !== undefined) return relayPlannerSession(relay, env);
  return storePlannerSession(o, env);
}

/**
 * The planner's session through `plan`'s relay: plan's own `twinlock mcp
 * --planner ID --handoff DIR` outside the sandbox freezes that one folder
 * and answers the wait, with the store's URL on a team store; the agent's
 * process holds no key, no URL and no password, and needs no write to the
 * gate home.
 */
function relayPlannerSession(socket: string, env: NodeJS.ProcessEnv): PlannerSession {
  const planner = env.TWINLOCK_PLANNER;
  if (!planner)
    throw new Error("plan's MCP relay is here but TWINLOCK_PLANNER is not set: this is an executor's session (exec), not a planner's");
  return mcpPlannerSession({ where: "plan's MCP relay", planner, transport: () => new SocketClientTransport(socket) });
}

/** The text of a direct store's refusal under a read-only gate home: the wrong advice ("fix the permissions") replaced. */
function throughRelay(error: unknown): never {
  const message = (error as Error)?.message ?? String(error);
  if (/\b(EROFS|EACCES|EPERM)\b/.test(message) && /fix the gate home's permissions/.test(message))
    throw new Error(
      `${message.replace(/; fix the gate home's permissions.*$/, "")}: the gate home is not writable from here (plan's sandbox keeps it read-only); the planner must freeze and wait through plan's MCP relay: make the planner tools without a store, under \`twinlock plan\``,
    );
  throw error;
}

function storePlannerSession(o: PlannerSessionOptions, env: NodeJS.ProcessEnv): PlannerSession {
  const pollMs = o.pollMs ?? 1000;
  const bound = (): SessionBinding => {
    const verdict = verifyBinding(env, o.home, new Date());
    if (!verdict.ok) throw new Error(`no planner's session holds: ${verdict.reason}`);
    const b = verdict.binding;
    if (b.kind !== "planner") throw new Error(`the session bound is executor ${b.executor}'s, not a planner's`);
    if (b.store !== "folder") throw new Error("this run is on a team store: freeze through the gate server's MCP tools instead");
    return b;
  };
  const storeOf = () => o.store ?? folderRunStore(openGateHome(o.home));
  const frozenRevision = async (b: SessionBinding) => {
    const run = await storeOf().read(b.run_file);
    const wf = Object.hasOwn(run.state.workflows, b.planner) ? run.state.workflows[b.planner] : undefined;
    if (!wf?.handoff) throw new Error(`${b.planner} has nothing frozen to review; submit the handoff first`);
    return { revision: wf.revision, hash: wf.handoff.hash };
  };
  return {
    async submitHandoff(s = {}) {
      const b = bound();
      const r = await freezePairHandoff({
        store: storeOf(),
        run: b.run_file,
        planner: b.planner,
        handoffDir: b.handoff_dir as string,
        unchangedBecause: s.unchangedBecause,
        actor: o.freezeKey ? undefined : "planner-agent",
        key: o.freezeKey,
      }).catch(throughRelay);
      return { hash: r.hash, revision: r.revision, state: r.workflow.state };
    },
    async waitForReview(w = {}) {
      const started = Date.now();
      // Verified before each wait, not after: a decision that ends the session is still the planner's to hear.
      let b = bound();
      const store = storeOf();
      const { revision } = await frozenRevision(b);
      for (;;) {
        const left = w.timeoutMs === undefined ? MAX_WAIT_MS : Math.max(w.timeoutMs - (Date.now() - started), 0);
        const found = await waitForDecision(store, b.run_file, b.planner, revision, w.signal, {
          timeoutMs: Math.min(left, MAX_WAIT_MS),
          pollMs,
        });
        if (found.status === "decided") return outcomeOf(found);
        if (found.status === "finished")
          throw new Error(`${b.planner}'s revision ${revision} is ${found.state}, with no decision of a person to wait for`);
        if (w.signal?.aborted) throw new Error("waiting for the review was cancelled");
        if (w.timeoutMs !== undefined && Date.now() - started >= w.timeoutMs)
          throw new Error(`no person decided on revision ${revision} within ${w.timeoutMs} ms; wait again`);
        b = bound();
      }
    },
    async reviewNow() {
      const b = bound();
      const { revision, hash } = await frozenRevision(b);
      const found = await waitForDecision(storeOf(), b.run_file, b.planner, revision, undefined, { timeoutMs: 0 });
      if (found.status === "finished")
        throw new Error(`${b.planner}'s revision ${revision} is ${found.state}, with no decision of a person to wait for`);
      return { revision, hash, decided: found.status === "decided" ? outcomeOf(found) : null };
    },
  };
}

function outcomeOf(found: Extract<DecisionWait, { status: "decided" }>): ReviewOutcome {
  return {
    decision: found.decision.decision,
    revision: found.decision.revision,
    hash: found.decision.handoff_hash,
    comments: found.decision.feedback,
    state: found.state,
  };
}
