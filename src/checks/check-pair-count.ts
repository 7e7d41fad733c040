import type { Diagnostic } from "../diagnostics/diagnostic.js";

/**
 * The genuine pair count must equal the declared one, when one is declared.
 * `at` gives the position of the declaration, asked only for a mismatch.
 */
export function checkPairCount(
  genuine: number,
  declared: number | undefined,
  source: string,
  at: () => { line: number; col: number } = () => ({ line: 1, col: 1 }),
): Diagnostic[] {
  if (declared === undefined || declared === genuine) return [];
  const { line, col } = at();
  return [
    {
      code: "PAIR_COUNT",
      severity: "error",
      file: source === "--expect-pairs" ? "." : "twinlock.yaml",
      line,
      col,
      message: `the suite has ${genuine} genuine pair${genuine === 1 ? "" : "s"}, but ${source} declares ${declared}; fix the broken pairs or the declared count`,
    },
  ];
}
