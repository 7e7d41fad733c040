import path from "node:path";
import { checkGraphFresh } from "../../checks/check-graph-fresh.js";
import { validateSuite } from "../../checks/validate-suite.js";
import { formatDiagnostic } from "../../diagnostics/format-diagnostic.js";
import { buildGraph } from "../../graph/build-graph.js";
import { formatOfFile, GRAPH_FORMATS, type GraphFormat, renderGraph } from "../../graph/render-graph.js";
import { parseChoice } from "../../input/parse-input.js";
import { atomicWriteFile } from "../../store/atomic-write.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { loadSuiteOption } from "../load-suite-option.js";
import { snakeKeys } from "../snake-keys.js";

export { DEFAULT_GRAPH_FILE } from "../../checks/check-graph-fresh.js";

export interface GraphOptions extends CommonOptions {
  suite?: string;
  format?: string;
  out?: string;
  check?: boolean;
}

/**
 * `twinlock graph`: print the capability graph, write it with `--out`, or
 * with `--check` rebuild it and compare byte for byte with the committed file.
 */
export function runGraph(options: GraphOptions): CommandResult {
  const suite = loadSuiteOption(options.suite);
  const report = validateSuite(suite, { bodies: false, graph: false });
  const out = options.out !== undefined ? path.resolve(options.out) : undefined;
  let format: GraphFormat | undefined;
  if (options.format !== undefined) format = parseChoice(options.format, GRAPH_FORMATS, "--format");
  const summary = { nodes: suite.byId.size, pairs: report.genuinePairs };

  if (options.check) {
    const fresh = checkGraphFresh(suite, report.twins, out, format);
    const ok = fresh.diagnostics.length === 0;
    const text = ok
      ? `graph ${fresh.file} is up to date (${summary.nodes} prompts, ${summary.pairs} pairs)`
      : [...fresh.diagnostics.map(formatDiagnostic), ...(fresh.diff.length ? ["(- committed, + rebuilt)", ...fresh.diff] : [])].join("\n");
    return {
      exitCode: ok ? 0 : 1,
      text,
      json: snakeKeys({
        ok,
        stale: !ok,
        file: fresh.file,
        missing: !fresh.exists,
        diff: fresh.diff,
        diagnostics: fresh.diagnostics,
        format: fresh.format,
        ...summary,
      }),
    };
  }
  const fmt = format ?? (out ? formatOfFile(out) : undefined) ?? "json";
  const text = renderGraph(buildGraph(suite, report.twins), fmt);
  if (out) {
    atomicWriteFile(out, text);
    return {
      exitCode: 0,
      text: `wrote ${out} (${summary.nodes} prompts, ${summary.pairs} pairs, ${fmt})`,
      json: { ok: true, file: out, format: fmt, ...summary },
    };
  }
  return { exitCode: 0, text: text.trimEnd(), json: fmt === "json" ? JSON.parse(text) : { ok: true, format: fmt, ...summary, text } };
}
