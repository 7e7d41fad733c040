import { decideToolCall } from "./decide-tool-call.js";
import type { ToolCall } from "./tool-call.js";
import { verifyBinding } from "./verify-binding.js";

/** A tool call's judgement: allowed, or denied with the reason the agent is shown. */
export type ToolJudgement = { allow: true } | { allow: false; reason: string };

/** What one tool call is judged on: the call, the session the environment names, and the gate home the caller (never the agent) names. */
export interface JudgeToolCallInput {
  call: ToolCall;
  /** The environment `twinlock exec` or `twinlock plan` started the agent with (TWINLOCK_RUN, TWINLOCK_SESSION, …). */
  env: NodeJS.ProcessEnv;
  /** The gate home the binding is read from; undefined is denied. */
  home: string | undefined;
  /** A read passes without a binding (the CLI hook's rule) unless this is set: then it too needs a verified session. */
  bindReads?: boolean;
  now?: Date;
}

/**
 * The gate's one judgement of a tool call (SPEC §11, §12), shared by the CLI
 * hook and the in-process adapters (src/adapters): the session binding
 * re-verified (its secret, the process below exec or plan, the lease, the
 * run unchanged since binding — no stop, close or new revision — and the
 * checkout still holding the approved bytes), then `decideToolCall`'s rules
 * (an executor's writes inside the admitted actions' targets or the checkout,
 * a planner's inside its handoff folder). Reads and calls that need no binding
 * are judged without reading a file. Fails closed: any error is a deny.
 */
export function judgeToolCall(input: JudgeToolCallInput): ToolJudgement {
  try {
    const { call } = input;
    const needsBinding = call.kind !== "unknown" && call.kind !== "unreadable" && (call.kind !== "read" || input.bindReads === true);
    if (!needsBinding) return judgementOf(decideToolCall(call, { unbound: "" }));
    const verdict = verifyBinding(input.env, input.home, input.now ?? new Date());
    if (!verdict.ok && call.kind === "read") return { allow: false, reason: `twinlock: ${call.tool} denied: ${verdict.reason}` };
    return judgementOf(decideToolCall(call, verdict.ok ? verdict.binding : { unbound: verdict.reason }));
  } catch (error) {
    return {
      allow: false,
      reason: `twinlock: judging ${input?.call?.tool ?? "the call"} failed (${(error as Error)?.message ?? error}); denied`,
    };
  }
}

function judgementOf(d: ReturnType<typeof decideToolCall>): ToolJudgement {
  return d.pass ? { allow: true } : { allow: false, reason: d.reason };
}
