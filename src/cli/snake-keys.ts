/**
 * `--json` speaks snake_case throughout, like the run file and receipts:
 * reports built as TypeScript objects (camelCase) are converted at the CLI
 * boundary, so the library keeps its own naming.
 */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snakeKeys(v)]));
}
