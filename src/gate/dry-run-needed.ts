import { makeNextStep, type NextStep } from "../run/next-step.js";
import type { Workflow } from "../run/run-schema.js";
import type { Prompt } from "../suite/prompt.js";

/**
 * Whether a prompt asks for a dry run first: `dry_run_required` is there and
 * not `false`. Read failing closed: any other value (`yes`, a string) asks,
 * though the gate refuses such a prompt before it gets here.
 */
export function declaresDryRun(prompt: Prompt | undefined): boolean {
  const declared = prompt?.frontmatter.dry_run_required;
  return declared !== undefined && declared !== false;
}

/**
 * The next step when an APPLY run's executor needs a passed dry run of this revision and has none: its
 * result, once a dry run of this revision was admitted and awaits one; a
 * revised plan, once the last one failed; else the dry run.
 */
export function dryRunStep(runFile: string, wf: Workflow): NextStep {
  const ofThisRevision = wf.dry_runs.filter((d) => d.revision === wf.revision && d.handoff_hash === wf.handoff?.hash);
  const last = ofThisRevision[ofThisRevision.length - 1];
  if (last?.result === "failed")
    return makeNextStep(
      `revise the plan: the dry run of revision ${wf.revision} failed (${last.note ?? "no note"}); revise the handoff, re-run readiness and re-freeze it for review (or close the workflow with --result failed)`,
      "freeze-pair-handoff",
      [runFile, wf.planner],
    );
  if (last?.result === null)
    return makeNextStep(
      `record the dry run's result: a dry run of revision ${wf.revision} was admitted and has no result yet (passed lets ${wf.executor} be admitted to apply)`,
      "dry-run-result",
      [runFile, wf.executor],
      [
        ["--result", "passed|failed"],
        ["--note", "TEXT"],
      ],
    );
  return makeNextStep(
    `dry-run first: ${wf.executor} declares dry_run_required, so it is admitted in an APPLY mode only after a passed dry run of revision ${wf.revision}`,
    "dry-run",
    [runFile, wf.executor],
    [["--checkout", "DIR"]],
  );
}
