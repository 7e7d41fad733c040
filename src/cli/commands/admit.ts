import { UsageError } from "../../errors/errors.js";
import { admit, recordDryRunResult } from "../../gate/admit.js";
import { EXECUTING_MODES } from "../../gate/init-run.js";
import { pairStatusFromRun } from "../../gate/pair-status.js";
import { resolveActor } from "../../gate/resolve-actor.js";
import { cleanText } from "../../input/clean-text.js";
import { parseActionIds, parseChoice, parsePromptId, parseText } from "../../input/parse-input.js";
import { ADMISSION_STOP } from "../../run/admission-checks.js";
import { shellQuote } from "../../run/next-step.js";
import { keyOption } from "../../trust/key-option.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";
import { colourEnabled, makeStyle } from "../style.js";

/** `twinlock admit RUN EXECUTOR`: every admission check, pass or fail with its values; exit 3 on any failure. */
export async function runAdmit(
  runFile: string,
  executor: string,
  o: CommonOptions & {
    planner?: string;
    mode?: string;
    environment?: string;
    actions?: string;
    dry?: boolean;
    actor?: string;
    checkout?: string;
  },
  purpose: "admit" | "dry-run" = "admit",
): Promise<CommandResult> {
  const r = await admit({
    run: runFile,
    store: storeOption(o),
    executor: parsePromptId(executor, "executor"),
    planner: o.planner === undefined ? undefined : parsePromptId(o.planner, "--planner"),
    mode: o.mode === undefined ? undefined : parseChoice(o.mode, EXECUTING_MODES, "--mode (a mode a run executes in)"),
    environment: o.environment === undefined ? undefined : parseText(o.environment, "--environment", 200),
    // `all` asks for every consented action, as leaving --actions out does.
    actions: o.actions === undefined || o.actions.trim() === "all" ? undefined : parseActionIds(o.actions, "--actions"),
    dry: o.dry,
    checkout: o.checkout,
    purpose,
    actor: resolveActor(o.actor),
  });
  const s = makeStyle(!o.json && colourEnabled());
  // Full hashes are in --json and the receipt; the table shortens them so it stays readable.
  const short = (t: string) => t.replace(/sha256:([0-9a-f]{12})[0-9a-f]{52}/g, "sha256:$1…");
  const lines = r.checks.map(
    // Details quote handoff file names and other text the agent chose: printed as one clean line each.
    (c) => `${c.ok ? s.green("pass") : s.red("FAIL")}  ${c.id.padEnd(5)} ${c.name}\n            ${s.dim(short(cleanText(c.detail)))}`,
  );
  // Loud, first and last: on an unsigned suite nothing proves who decided.
  const unsigned = r.unsigned ? [s.red("UNSIGNED: receipts prove nothing about who decided")] : [];
  lines.unshift(...unsigned);
  if (!r.admitted) {
    lines.unshift(s.red(ADMISSION_STOP));
    lines.push(s.red(`refused: ${r.checks.filter((c) => !c.ok).length} check(s) failed; nothing was recorded`));
    const failed = new Set(r.checks.filter((c) => !c.ok).map((c) => c.id));
    if (r.executingSince !== undefined && r.planner) lines.push(alreadyExecuting(runFile, r.planner, r.executor, r.executingSince));
    else if (failed.size === 1 && failed.has("dry-run"))
      lines.push(`next: twinlock dry-run ${shellQuote(runFile)} ${r.executor} --checkout DIR  (then dry-run-result)`);
    else if (r.planner) lines.push(`next: twinlock pair-status ${shellQuote(runFile)} ${r.planner}  (shows the one legal next step)`);
  } else if (r.dry) {
    lines.push(s.green(`all ${r.checks.length} checks pass (--dry: nothing recorded, consent not used)`));
  } else if (purpose === "dry-run") {
    lines.push(
      s.green(`dry run of ${r.executor} for ${r.planner} admitted (DRAFT_ONLY): the consent is not used, the workflow stays ready`),
    );
    lines.push(
      `next: twinlock dry-run-result ${shellQuote(runFile)} ${r.executor} --result passed|failed --note TEXT${r.unsigned ? "" : " --key FILE"}`,
    );
    if (r.checkout) lines.push(`checked out the approved bytes, read-only, to ${r.checkout}: dry-run from there`);
  } else {
    lines.push(s.green(`admitted ${r.executor} for ${r.planner}: state executing; the consent is used up`));
    if (r.checkout) lines.push(`checked out the approved bytes, read-only, to ${r.checkout}: work from there`);
    else lines.push(`next: twinlock checkout ${shellQuote(runFile)} ${r.executor} DIR  (a read-only copy of exactly the approved bytes)`);
  }
  lines.push(...unsigned);
  return {
    exitCode: r.admitted ? 0 : 3,
    text: lines.join("\n"),
    json: { ok: r.admitted, ...(r.admitted ? {} : { stop: ADMISSION_STOP }), ...r },
  };
}

/** `twinlock dry-run-result RUN EXECUTOR --result passed|failed --note TEXT`. */
export async function runDryRunResult(
  runFile: string,
  executor: string,
  o: CommonOptions & { result: string; note: string; actor?: string; key?: string },
): Promise<CommandResult> {
  const result = parseChoice(o.result, ["passed", "failed"] as const, "--result");
  const note = parseText(o.note, "--note");
  if (!note.trim()) throw new UsageError("--note must say what the dry run showed");
  const store = storeOption(o);
  const r = await recordDryRunResult({
    run: runFile,
    store,
    executor: parsePromptId(executor, "executor"),
    result,
    note,
    actor: o.actor === undefined ? undefined : resolveActor(o.actor),
    key: keyOption(o.key),
  });
  // After a failed dry run the one legal step is pair-status's (another dry run of this revision, or a revised plan).
  const next =
    result === "passed"
      ? `twinlock admit ${shellQuote(runFile)} ${executor}`
      : (await pairStatusFromRun(store, runFile, r.workflow.planner)).next_command;
  const text = `recorded dry run ${result} for ${executor} on revision ${r.workflow.revision} by ${r.receipt.by}${r.receipt.signature ? " (signed)" : ""}${next ? `\nnext: ${next}` : ""}`;
  return { exitCode: 0, text, json: { ok: true, result, dry_runs: r.workflow.dry_runs } };
}

/**
 * Why a pair already executing admits nothing more, and what is true to do
 * instead: a consent admits once (by `admit` or `exec`), and no command binds
 * an agent's session to an admission already made.
 */
function alreadyExecuting(runFile: string, planner: string, executor: string, at: string): string {
  const run = shellQuote(runFile);
  return [
    `${executor} is already executing for ${planner}: its consent was used by an admission (\`admit\` or \`exec\`) at ${at}, and a consent admits once;`,
    "no command binds an agent's session to an admission already made.",
    `To carry on by hand: twinlock checkout ${run} ${executor} DIR.`,
    `To run an agent on this work: close it (twinlock close ${run} ${planner} --result failed|rolled_back|verified), start a new run,`,
    "and after its consent start the agent with `twinlock exec` instead of `admit` (exec admits and binds in one step).",
  ].join("\n");
}
