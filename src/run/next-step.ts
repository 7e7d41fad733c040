import type { State } from "./transition-table.js";

/**
 * The one legal next step from a state, as data a front end renders: the
 * operation (the CLI command, the API operation), its arguments with what
 * fills them, and the choices among its options. `describeNextStep` fills it
 * in for a workflow; the CLI prints it as a command line (`command`), a page
 * can show a form for `operation`.
 */
export interface NextStepTemplate {
  action: string;
  /** The gate operation, named as the CLI command; null when the workflow is over. */
  operation: string | null;
  /** Positional arguments, in order: which fact of the workflow fills each. */
  args: ReadonlyArray<"run" | "planner" | "executor">;
  /** Options with a fixed value or a choice (`a|b`), or filled from the workflow (`{hash}`). */
  options: ReadonlyArray<readonly [string, string]>;
  /** Flags of which one must be given (`--approve|--decline`). */
  choice?: readonly string[];
}

/** The one legal next step from each state. */
export const NEXT_STEP: Record<State, NextStepTemplate> = {
  investigating: {
    action: "freeze the handoff",
    operation: "freeze-pair-handoff",
    args: ["run", "planner"],
    options: [["--handoff", "DIR"]],
  },
  handoff_frozen: { action: "present the frozen plan for review", operation: "present", args: ["run", "planner"], options: [] },
  plan_review_pending: {
    action: "review the frozen plan: request changes, approve or decline",
    operation: "review-pair-plan",
    args: ["run", "planner"],
    options: [
      ["--decision", "changes_requested|approved|declined"],
      ["--handoff-hash", "{hash}"],
    ],
  },
  plan_revision_pending: {
    action: "revise the handoff, re-run readiness and re-freeze it",
    operation: "freeze-pair-handoff",
    args: ["run", "planner"],
    options: [],
  },
  execution_consent_pending: {
    action: "answer the execution consent question",
    operation: "consent-pair-execution",
    args: ["run", "planner"],
    choice: ["--approve", "--decline"],
    options: [["--handoff-hash", "{hash}"]],
  },
  approval_pending: {
    action: "record the separate apply approval",
    operation: "approve-apply",
    args: ["run", "planner"],
    options: [["--approver", "NAME"]],
  },
  // The agent's work goes through exec, which admits the exact twin once and runs the agent's command under the gate.
  dry_run_ready: {
    action: "run the exact twin's agent through the gate (exec admits it once)",
    operation: "exec",
    args: ["run", "executor"],
    options: [["--", "AGENT-COMMAND…"]],
  },
  executing: {
    action: "close the workflow with its result",
    operation: "close",
    args: ["run", "planner"],
    options: [["--result", "verified|failed|rolled_back"]],
  },
  closed: { action: "none: the workflow is closed", operation: null, args: [], options: [] },
  failed: { action: "none: the workflow failed; start a new run", operation: null, args: [], options: [] },
};

/** A next step filled in for one workflow: the data, and the command line that says it. */
export interface NextStep {
  action: string;
  operation: string | null;
  /** Positional arguments, filled. */
  args: string[];
  /** Options with their values (`{hash}` filled; a choice left as `a|b`). */
  options: Array<[string, string]>;
  choice: string[];
  /** The step as a `twinlock …` command line; "" when there is none. */
  command: string;
}

/** A next step as data alone (what a page or an API offers), without its command line. */
export type NextStepData = Pick<NextStep, "operation" | "args" | "options" | "choice">;

/** The data of a next step, for results and refusal details. */
export function nextStepData(step: NextStep): NextStepData {
  return { operation: step.operation, args: step.args, options: step.options, choice: step.choice };
}

/** The next step with the run file, planner, executor and hash filled in. */
export function describeNextStep(state: State, fill: { run: string; planner: string; executor: string; hash?: string | null }): NextStep {
  const step = NEXT_STEP[state];
  const args = step.args.map((a) => fill[a]);
  const options = step.options.map(([flag, value]): [string, string] => [flag, value === "{hash}" ? (fill.hash ?? "sha256:…") : value]);
  const choice = [...(step.choice ?? [])];
  return {
    action: step.action,
    operation: step.operation,
    args,
    options,
    choice,
    command: commandLine(step.operation, args, options, choice),
  };
}

/** A next step outside the table (a consent to ask again, a re-freeze, a dry run first), with its command line. */
export function makeNextStep(
  action: string,
  operation: string,
  args: string[],
  options: Array<[string, string]> = [],
  choice: string[] = [],
): NextStep {
  return { action, operation, args, options, choice, command: commandLine(operation, args, options, choice) };
}

/** The steps that record a signed receipt on a suite that requires them (a freeze with the planner's freeze key). */
export const SIGNED_OPERATIONS = new Set([
  "freeze-pair-handoff",
  "review-pair-plan",
  "consent-pair-execution",
  "approve-apply",
  "dry-run-result",
  "resolve-stop",
]);

/** The step as printed for a suite that does (`signing`) or does not sign: `--key FILE` on a step that records a signed receipt. */
export function withKeyWhenSigning(step: NextStep, signing: boolean): NextStep {
  return signing && step.operation !== null && SIGNED_OPERATIONS.has(step.operation) ? withKeyOption(step) : step;
}

/** The same step signed with a key: `--key FILE` added (the CLI's way; a page signs with a passkey). */
export function withKeyOption(step: NextStep): NextStep {
  const options: Array<[string, string]> = [...step.options, ["--key", "FILE"]];
  return { ...step, options, command: commandLine(step.operation, step.args, options, step.choice) };
}

/** A next step as the command a person types. */
function commandLine(operation: string | null, args: string[], options: Array<[string, string]>, choice: string[]): string {
  if (operation === null) return "";
  const parts = ["twinlock", operation, ...args.map((a, i) => (i === 0 ? shellQuote(a) : a))];
  // A choice of flags comes before the options, as `--approve|--decline --handoff-hash HASH`.
  if (choice.length > 0) parts.push(choice.join("|"));
  for (const [flag, value] of options) parts.push(flag, value);
  return parts.join(" ");
}

/** Quote a path for a shell command line only when it needs it. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
