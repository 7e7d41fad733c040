import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { validateSuite } from "../../checks/validate-suite.js";
import { UsageError } from "../../errors/errors.js";
import { buildGraph } from "../../graph/build-graph.js";
import { diffLines } from "../../graph/diff-lines.js";
import { formatOfFile, GRAPH_FORMATS, type GraphFormat, renderGraph } from "../../graph/render-graph.js";
import { atomicWriteFile } from "../../store/atomic-write.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { loadSuiteOption } from "../load-suite-option.js";

export interface GraphOptions extends CommonOptions {
  suite?: string;
  format?: string;
  out?: string;
  check?: boolean;
}

/** The committed graph file when `--check` is given without `--out`. */
export const DEFAULT_GRAPH_FILE = "capability-graph.json";

/**
 * `twinlock graph`: print the capability graph, write it with `--out`, or
 * with `--check` rebuild it and compare byte for byte with the committed file.
 */
export function runGraph(options: GraphOptions): CommandResult {
  const suite = loadSuiteOption(options.suite);
  const report = validateSuite(suite, { bodies: false });
  const target =
    options.out !== undefined
      ? path.resolve(options.out)
      : options.check
        ? path.resolve(suite.root, suite.config.graph_file ?? DEFAULT_GRAPH_FILE)
        : undefined;
  let format: GraphFormat = "json";
  if (options.format !== undefined) {
    if (!(GRAPH_FORMATS as readonly string[]).includes(options.format))
      throw new UsageError(`--format ${options.format} is not one of ${GRAPH_FORMATS.join(", ")}`);
    format = options.format as GraphFormat;
  } else if (target) {
    format = formatOfFile(target) ?? "json";
  }
  const text = renderGraph(buildGraph(suite, report.twins), format);
  const summary = { nodes: suite.byId.size, pairs: report.genuinePairs, format };

  if (options.check) {
    const file = target as string;
    if (!existsSync(file)) {
      return {
        exitCode: 1,
        text: `graph file ${file} does not exist; create it with: twinlock graph --suite ${suite.root} --out ${file}`,
        json: { ok: false, stale: true, file, missing: true, ...summary },
      };
    }
    const committed = readFileSync(file, "utf8");
    if (committed === text) return { exitCode: 0, text: `graph ${file} is up to date (${summary.nodes} prompts, ${summary.pairs} pairs)`, json: { ok: true, stale: false, file, ...summary } };
    const diff = diffLines(committed, text);
    return {
      exitCode: 1,
      text: [`GRAPH_STALE ${file} differs from the graph rebuilt from the suite (- committed, + rebuilt):`, ...diff, `refresh it with: twinlock graph --suite ${suite.root} --out ${file}`].join("\n"),
      json: { ok: false, stale: true, file, diff, ...summary },
    };
  }
  if (target) {
    atomicWriteFile(target, text);
    return { exitCode: 0, text: `wrote ${target} (${summary.nodes} prompts, ${summary.pairs} pairs, ${format})`, json: { ok: true, file: target, ...summary } };
  }
  return { exitCode: 0, text: text.trimEnd(), json: format === "json" ? JSON.parse(text) : { ok: true, ...summary, text } };
}
