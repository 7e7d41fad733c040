import { HttpProblem } from "./http-problem.js";

/** A form's result of criterion ID: `criterion-result:ID` (passed or failed); its command is `criterion-command:ID`. */
const RESULT_FIELD = "criterion-result:";
const COMMAND_FIELD = "criterion-command:";
/** A hex sha256 as `sha256sum` prints it. */
const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * One line of the changed-files field as a changed file: `SHA256 PATH` (as
 * `sha256sum` prints it, or `sha256:<hex> PATH`) for a file that is there,
 * `deleted PATH` for one that is gone. Split at the first space, so a path
 * may hold spaces; no pattern runs over the path.
 */
function changedFileOf(line: string, n: number): { path: string; sha256: string | null } {
  const at = line.indexOf(" ");
  const first = at < 0 ? line : line.slice(0, at);
  const path = at < 0 ? "" : line.slice(at + 1).trimStart();
  const refuse = () =>
    new HttpProblem(
      400,
      "BAD_INPUT",
      `line ${n} of the changed files is not "SHA256 PATH" or "deleted PATH"; list each changed file as sha256sum prints it (git diff --name-only BASE...HEAD | xargs sha256sum), a deleted one as "deleted PATH"`,
    );
  if (path === "") throw refuse();
  if (first === "deleted") return { path, sha256: null };
  if (HEX_SHA256.test(first)) return { path, sha256: `sha256:${first}` };
  if (first.startsWith("sha256:") && HEX_SHA256.test(first.slice(7))) return { path, sha256: first };
  throw refuse();
}

/**
 * The verified-close form's fields as the API's request: `changed_files` as
 * text (one file a line, blank lines skipped) becomes the list, and each
 * criterion's `criterion-command:ID` that is not empty becomes one entry of
 * `criteria` with its `criterion-result:ID`; a criterion left empty has no
 * evidence, which the gate then refuses by name. A JSON request's lists are
 * left as sent, for the schema to judge. The body's size is bounded before
 * this runs (the server's request limit).
 */
export function verifiedCloseFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const criteria: Array<{ id: string; result: unknown; command: string }> = [];
  for (const [k, v] of Object.entries(fields)) {
    if (k.startsWith(COMMAND_FIELD)) {
      const id = k.slice(COMMAND_FIELD.length);
      if (typeof v === "string" && v.trim() !== "")
        criteria.push({ id, result: fields[`${RESULT_FIELD}${id}`] ?? "passed", command: v.trim() });
    } else if (!k.startsWith(RESULT_FIELD)) out[k] = v;
  }
  if (typeof out.changed_files === "string")
    out.changed_files = out.changed_files
      .split("\n")
      .map((line, i) => [line.replace(/\r$/, ""), i + 1] as const)
      .filter(([line]) => line.trim() !== "")
      .map(([line, n]) => changedFileOf(line, n));
  if (criteria.length > 0 || out.criteria === undefined) out.criteria = [...(Array.isArray(out.criteria) ? out.criteria : []), ...criteria];
  if (out.residual === "") delete out.residual;
  return out;
}
