/**
 * The next step a refusal points to, as data: the gate operation and what to
 * give it, never a command line. A refusal carries it as `details.next`; each
 * front end words it (the CLI as the command a person types, a page or MCP as
 * the operation's name), so the library says what to do without speaking any
 * front end's words.
 */

/**
 * What to do next: an operation (named as the CLI command, `trust pin`) with
 * its named values (`suite` → the folder; `key` → `FILE`, meaning a key file of
 * yours; `""` for a switch that takes no value) and its positional values.
 */
export interface StepHint {
  operation: string;
  positional?: readonly string[];
  args?: Readonly<Record<string, string>>;
}

/** A step hint for `operation` with named values (in the order given) and positional values. */
export function stepHint(operation: string, args: Record<string, string> = {}, positional: string[] = []): StepHint {
  return positional.length > 0 ? { operation, positional, args } : { operation, args };
}

/** Whether a refusal's `details.next` is a step hint (details are data from anywhere: checked, not trusted). */
export function isStepHint(value: unknown): value is StepHint {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  if (typeof v.operation !== "string" || !/^[a-z][a-z-]*( [a-z][a-z-]*)?$/.test(v.operation)) return false;
  if (v.positional !== undefined && !(Array.isArray(v.positional) && v.positional.every((p) => typeof p === "string"))) return false;
  if (v.args === undefined) return true;
  if (typeof v.args !== "object" || v.args === null || Array.isArray(v.args)) return false;
  return Object.entries(v.args).every(([k, a]) => /^[a-z][a-z-]*$/.test(k) && typeof a === "string");
}
