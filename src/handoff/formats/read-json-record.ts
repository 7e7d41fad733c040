import { UsageError } from "../../errors/errors.js";
import { BUDGETS, requireJsonWithin } from "../../input/budgets.js";
import { findDuplicateJsonKey } from "../../input/duplicate-json-key.js";
import { describeJsonError, requireShallowJson } from "../../input/parse-input.js";
import type { ReadinessProblem } from "../handoff-model.js";
import type { HandoffSource } from "../handoff-source.js";

/**
 * A record file of the handoff parsed as JSON, or undefined with the problem
 * pushed: missing, unreadable, not JSON (a NUL byte included), or nested
 * deeper than twinlock reads.
 */
export function readJsonRecord(source: HandoffSource, file: string, problems: ReadinessProblem[]): { data: unknown } | undefined {
  if (!source.files.includes(file)) {
    problems.push({ file, message: `missing: a handoff needs ${file}` });
    return undefined;
  }
  const read = source.read(file);
  if (read.problem !== undefined) {
    problems.push({ file, message: read.problem });
    return undefined;
  }
  try {
    requireJsonWithin(BUDGETS.handoffRecord, read.text, file);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    problems.push({ file, message: error.message });
    return undefined;
  }
  let data: unknown;
  try {
    if (read.text.includes("\u0000")) throw new SyntaxError("contains a NUL byte");
    data = JSON.parse(read.text);
  } catch (error) {
    problems.push({ file, message: `not valid JSON: ${describeJsonError(error)}` });
    return undefined;
  }
  // JSON.parse keeps the last of two equal keys; a person's viewer, or a model reading the bytes, may take the other.
  const twice = findDuplicateJsonKey(read.text);
  if (twice !== undefined) {
    problems.push({
      file,
      message: `holds the key ${JSON.stringify(twice)} twice in one object; the gate would read one and a person or a model could read the other — keep one`,
    });
    return undefined;
  }
  try {
    requireShallowJson(data, file);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    problems.push({ file, message: error.message });
    return undefined;
  }
  return { data };
}

/** The Markdown files of a source with their text; a file that cannot be read is a problem. */
export function readMarkdownTexts(source: HandoffSource, problems: ReadinessProblem[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const file of source.files.filter((f) => f.endsWith(".md"))) {
    const read = source.read(file);
    if (read.problem !== undefined) problems.push({ file, message: read.problem });
    else out.push([file, read.text]);
  }
  return out;
}
