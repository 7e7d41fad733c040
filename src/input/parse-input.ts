import { UsageError } from "../errors/errors.js";
import { CHANGE_REF_PATTERN } from "../run/change-ref.js";
import { MODES, type Mode, PROMPT_ID_PATTERN } from "../suite/prompt.js";
import { closestChoice } from "./closest-choice.js";

/** A prompt ID as given on the command line, or a UsageError quoting it. */
export function parsePromptId(value: string, what?: string): string {
  if (!PROMPT_ID_PATTERN.test(value)) {
    const upper = value.trim().toUpperCase();
    const hint = PROMPT_ID_PATTERN.test(upper) ? `did you mean ${upper}? ` : "";
    throw new UsageError(
      `${what ? `${what} ` : ""}${JSON.stringify(clip(value))} is not a prompt ID; ${hint}expected the form MD-29 (^[A-Z][A-Z0-9]*-[0-9]+$)`,
    );
  }
  return value;
}

/** A mode name, or a UsageError listing the modes. */
export function parseMode(value: string): Mode {
  return parseChoice(value, MODES, "mode");
}

/**
 * One of `choices`, or a UsageError naming them, with "did you mean …?" when
 * the value is a near miss (a typo, another case: `apply_safe`, `pass`).
 */
export function parseChoice<T extends string>(value: string, choices: readonly T[], what: string): T {
  if ((choices as readonly string[]).includes(value)) return value as T;
  const meant = closestChoice(value, choices) ?? choices.find((c) => c.startsWith(value.toLowerCase()) && value.length >= 3);
  throw new UsageError(
    `${what} ${JSON.stringify(clip(value))} is not one of ${choices.join(", ")}${meant ? `; did you mean ${meant}?` : ""}`,
  );
}

/**
 * A comma-separated list of +ACTION IDs (`A1,A3` or `+ACTION:A1,+ACTION:A3`)
 * split into its IDs; a UsageError for an empty list or an empty item. What
 * the IDs may be (each once, no `all` among them) the gate judges for every
 * front end alike (`requireActionIds`).
 */
export function parseActionIds(value: string, option: string): string[] {
  const ids = value.split(",").map((s) => s.trim().replace(/^\+ACTION:/, ""));
  if (ids.every((id) => id === "")) throw new UsageError(`${option} needs at least one +ACTION ID, such as A1,A3`);
  if (ids.includes(""))
    throw new UsageError(`${option} ${JSON.stringify(clip(value))} has an empty item; list the IDs with one comma between, such as A1,A3`);
  return ids;
}

/** A non-negative whole number, or a UsageError naming the option. */
export function parseCount(value: string, option: string): number {
  if (!/^[0-9]{1,9}$/.test(value)) throw new UsageError(`${option} takes a whole number, got ${JSON.stringify(clip(value))}`);
  return Number(value);
}

/** Reject NUL bytes and over-long text in free-text options (names, feedback, notes). */
export function parseText(value: string, option: string, max = 64 * 1024): string {
  if (value.includes("\u0000")) throw new UsageError(`${option} contains a NUL byte; pass plain text`);
  if (Buffer.byteLength(value) > max)
    throw new UsageError(`${option} is ${Buffer.byteLength(value)} bytes, over the ${max}-byte limit; shorten it or link to a document`);
  return value;
}

/**
 * A person's or agent's name (`--actor`, `--reviewer`, …): plain text of at
 * most 200 bytes without control or bidi characters, which would let a name
 * rewrite the lines `log` and `pair-status` print around it.
 */
export function parseName(value: string, option: string): string {
  const text = parseText(value, option, 200);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(text))
    throw new UsageError(`${option} contains a control or bidi character; give a plain name`);
  return text;
}

/** A change reference (`OWNER/REPO#NUMBER` or `OWNER/REPO@BRANCH`), or one line saying what form it needs. */
export function parseChangeRef(value: string, option: string): string {
  if (value.length > 420 || !CHANGE_REF_PATTERN.test(value))
    throw new UsageError(
      `${option} ${JSON.stringify(clip(value))} is not a change; give OWNER/REPO#NUMBER for a pull request or OWNER/REPO@BRANCH, e.g. acme/shop#42`,
    );
  return value;
}

/** Shorten a quoted input for an error line. */
export function clip(value: string, max = 80): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

/** `sha256:<64 hex>`, or a UsageError showing the expected form. */
export function parseHashOption(value: string, option = "--handoff-hash"): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(value))
    throw new UsageError(
      `${option} ${JSON.stringify(clip(value))} is not a handoff hash; expected sha256: followed by 64 lower-case hex digits (see \`twinlock hash DIR\`)`,
    );
  return value;
}

/** `30m`, `4h`, `2d` → milliseconds, or a UsageError. */
export function parseDuration(value: string, option: string): number {
  // A unit in capitals (4H) is the same duration.
  const m = /^([0-9]{1,6})(m|h|d)$/.exec(value.trim().toLowerCase());
  if (m && Number(m[1]) === 0)
    throw new UsageError(`${option} ${JSON.stringify(clip(value))} is no time at all; give a positive duration such as 30m, 4h or 2d`);
  if (!m) throw new UsageError(`${option} ${JSON.stringify(clip(value))} is not a duration; write it like 30m, 4h or 2d`);
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "m" | "h" | "d"];
  return Number(m[1]) * unit;
}

/** A stop reason slug such as `missing-backup`. */
export function parseStopReason(value: string): string {
  const v = value.startsWith("!STOP:") ? value.slice(6) : value;
  if (!/^[a-z0-9][a-z0-9-]{0,119}$/.test(v)) {
    const slug = v
      .trim()
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 120);
    throw new UsageError(
      `--reason ${JSON.stringify(clip(value))} is not a slug; use lower-case words joined by -${slug ? `: did you mean ${slug}?` : ", e.g. missing-backup"}`,
    );
  }
  return v;
}

/** A file or folder path given by a person: refuse NUL bytes before any file call sees them. */
export function requirePlainPath(value: string, what: string): string {
  if (value.includes("\u0000"))
    throw new UsageError(`${what} ${JSON.stringify(clip(value.split("\u0000").join("\\0")))} contains a NUL byte; give a real path`);
  return value;
}

/** One line describing a JSON.parse failure, without echoing the input (which may hold newlines or control characters). */
export function describeJsonError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split(/, "|\n/)[0] ?? message;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is being removed
  return clip(first.replace(/[\u0000-\u001f\u007f]/g, "�"), 120);
}

/** Deepest JSON nesting twinlock reads; real run files and records stay under 20. */
export const MAX_JSON_DEPTH = 64;

/** Refuse parsed JSON nested deeper than MAX_JSON_DEPTH, before recursive code can overflow the stack on it. */
export function requireShallowJson(value: unknown, what: string): void {
  const stack: Array<{ v: unknown; d: number }> = [{ v: value, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop() as { v: unknown; d: number };
    if (v === null || typeof v !== "object") continue;
    if (d >= MAX_JSON_DEPTH) throw new UsageError(`${what} is nested more than ${MAX_JSON_DEPTH} levels deep; it is not a twinlock file`);
    for (const child of Object.values(v as object)) stack.push({ v: child, d: d + 1 });
  }
}
