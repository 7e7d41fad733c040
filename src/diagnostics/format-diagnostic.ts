import type { Diagnostic } from "./diagnostic.js";

/** `path:line:col CODE message`, with `warning` marked, as SPEC §3 prints problems. */
export function formatDiagnostic(d: Diagnostic): string {
  const tag = d.severity === "warning" ? `${d.code} (warning)` : d.code;
  return `${d.file}:${d.line}:${d.col} ${tag} ${d.message}`;
}
