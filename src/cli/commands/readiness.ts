import { checkReadiness } from "../../handoff/check-readiness.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { snakeKeys } from "../snake-keys.js";

/** `twinlock readiness DIR`: every problem with its file and record ID; exit 1 when not ready. */
export function runReadiness(dir: string, _options: CommonOptions): CommandResult {
  const r = checkReadiness(dir);
  const c = r.counts;
  const lines = [
    ...r.problems.map((p) => `${p.file}${p.record ? ` [${p.record}]` : ""}: ${p.message}`),
    ...r.openUnknowns.map((u) => `open ?UNKNOWN:${u.id}: ${u.question}${u.owner ? ` (owner: ${u.owner})` : ""}`),
    `${r.ready ? "ready" : "not ready"}: ${c.evidence} evidence, ${c.findings} findings, ${c.unknowns} unknowns (${r.openUnknowns.length} open), ${c.actions} actions, ${c.criteria} criteria, ${c.files} files; ${r.problems.length} problem${r.problems.length === 1 ? "" : "s"}`,
  ];
  const { records: _records, ...json } = r;
  return { exitCode: r.ready ? 0 : 1, text: lines.join("\n"), json: snakeKeys({ ok: r.ready, ...json }) };
}
