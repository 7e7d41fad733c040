/**
 * The CLI's words for a refusal's next step (`details.next`, a StepHint of
 * src/errors/step-hint.ts): the command a person types.
 */
import type { StepHint } from "../errors/step-hint.js";
import { shellQuote } from "../run/next-step.js";

/** The step as a `twinlock …` command line: the operation, each named value as `--name VALUE` (a switch as `--name`), then the positional values. */
export function stepHintCommand(hint: StepHint): string {
  const parts = ["twinlock", hint.operation];
  for (const [name, value] of Object.entries(hint.args ?? {}))
    parts.push(...(value === "" ? [`--${name}`] : [`--${name}`, shellQuote(value)]));
  for (const value of hint.positional ?? []) parts.push(shellQuote(value));
  return parts.join(" ");
}

/** A refusal's message with its next step as the command to run, in the CLI's words. */
export function wordWithStepHint(message: string, hint: StepHint): string {
  return `${message} (\`${stepHintCommand(hint)}\`)`;
}
