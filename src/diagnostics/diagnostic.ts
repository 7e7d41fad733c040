/**
 * Diagnostics are data: every check returns these, and only the CLI decides
 * what they mean for the exit code. Codes come from one union so a typo is a
 * type error and the README's code table can be checked against it.
 */
export const DIAGNOSTIC_CODES = [
  // suite loading and parsing
  "SUITE_SYMLINK_SKIPPED",
  "FILE_UNREADABLE",
  "FILE_TOO_LARGE",
  "FILE_NOT_UTF8",
  "FILE_NUL_BYTE",
  "FRONTMATTER_MISSING",
  "FRONTMATTER_UNCLOSED",
  "FRONTMATTER_YAML",
  "FRONTMATTER_NOT_MAPPING",
  "PROMPT_ID_MISSING",
  "PROMPT_ID_FORMAT",
  "PROMPT_ID_DUPLICATE",
  "FIELD_TYPE",
  "FIELD_VALUE",
  "FIELD_MISSPELT",
  // pairs
  "PAIR_TARGET_MISSING",
  "PAIR_NOT_RECIPROCAL",
  "PAIR_ROLE",
  "PAIR_METADATA",
  "PAIR_REQUIRED_WITHOUT_TWIN",
  "PAIR_TWIN_WITHOUT_REQUIRED",
  "PAIR_EXECUTOR_REQUIRES",
  "OVERRIDE_KEY",
  // references
  "REF_UNKNOWN",
  "REF_SELF",
  "REF_CYCLE",
  "REF_CYCLE_PAIRED",
  // count
  "PAIR_COUNT",
  // bodies
  "BODY_BLOCK_MISSING",
  "BODY_BLOCK_UNCLOSED",
  "BODY_MARKER_MISSING",
  "BODY_PHRASE_MISSING",
  "BODY_TWIN_NOT_NAMED",
  "BODY_ALTERNATE_EXECUTOR",
  "BODY_COPIED_VERIFICATION",
  "BODY_HIDDEN_TEXT",
  "BODY_PLACEHOLDER",
  // graph, state machine, refusal, config
  "GRAPH_STALE",
  "STATE_MACHINE",
  "TWIN_REFUSAL",
  "CONFIG_INVALID",
  "SUITE_UNSIGNED",
] as const;

export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[number];

export type Severity = "error" | "warning";

/** One located problem. `file` is POSIX and relative to the suite root; line and col are 1-based. */
export interface Diagnostic {
  code: DiagnosticCode;
  severity: Severity;
  file: string;
  line: number;
  col: number;
  message: string;
  /** The prompt the problem is about, when there is one. */
  promptId?: string;
  /** The frontmatter key or body block named by the problem, when there is one. */
  field?: string;
}

/** Position of a whole file, for problems that have no better place. */
export const FILE_START = { line: 1, col: 1 } as const;

/** True when any diagnostic in the list is an error (warnings never fail a check). */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

/** Sort by file, line, column, then code, so every output is deterministic. */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  // twinlock.yaml's problems first: a broken config changes which files are read and how, so it explains the rest.
  const rank = (d: Diagnostic) => (d.file === "twinlock.yaml" ? 0 : 1);
  return [...diagnostics].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      compare(a.file, b.file) ||
      a.line - b.line ||
      a.col - b.col ||
      compare(a.code, b.code) ||
      compare(a.message, b.message),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
