import { existsSync } from "node:fs";
import path from "node:path";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { buildGraph } from "../graph/build-graph.js";
import { diffLines } from "../graph/diff-lines.js";
import { formatOfFile, type GraphFormat, renderGraph } from "../graph/render-graph.js";
import { readRegularFile } from "../input/read-regular-file.js";
import type { Suite } from "../suite/load-suite.js";
import type { ExactTwin } from "../twin/resolve-exact-twin.js";

/** Largest committed graph file read (a suite of 10,000 prompts makes a few MiB). */
const MAX_GRAPH_BYTES = 256 * 1024 * 1024;

/** The committed graph file when none is named: the suite's `graph_file`, else this. */
export const DEFAULT_GRAPH_FILE = "capability-graph.json";

export interface GraphFreshness {
  file: string;
  format: GraphFormat;
  rebuilt: string;
  exists: boolean;
  diff: string[];
  diagnostics: Diagnostic[];
}

/**
 * Rebuild the capability graph and compare it byte for byte with the
 * committed file (SPEC §3); a difference is a GRAPH_STALE problem at the
 * first line that differs, with the readable difference alongside.
 */
export function checkGraphFresh(suite: Suite, pairs: readonly ExactTwin[], file?: string, format?: GraphFormat): GraphFreshness {
  const target = file ?? path.resolve(suite.root, suite.config.graph_file ?? DEFAULT_GRAPH_FILE);
  const fmt = format ?? formatOfFile(target) ?? "json";
  const rebuilt = renderGraph(buildGraph(suite, pairs), fmt);
  const shown = path.relative(suite.root, target).startsWith("..") ? target : path.relative(suite.root, target).split(path.sep).join("/");
  const refresh = `refresh it with: twinlock graph --suite ${suite.root} --out ${target}`;
  if (!existsSync(target)) {
    return {
      file: target,
      format: fmt,
      rebuilt,
      exists: false,
      diff: [],
      diagnostics: [
        { code: "GRAPH_STALE", severity: "error", file: shown, line: 1, col: 1, message: `the graph file does not exist; ${refresh}` },
      ],
    };
  }
  // graph_file is a path from twinlock.yaml: a FIFO or device there must not hang validate.
  const committed = readRegularFile(target, "graph file", { maxBytes: MAX_GRAPH_BYTES, fix: "make it the committed graph file" }).toString(
    "utf8",
  );
  if (committed === rebuilt) return { file: target, format: fmt, rebuilt, exists: true, diff: [], diagnostics: [] };
  const a = committed.split("\n");
  const b = rebuilt.split("\n");
  let first = 0;
  while (first < a.length && first < b.length && a[first] === b[first]) first++;
  return {
    file: target,
    format: fmt,
    rebuilt,
    exists: true,
    diff: diffLines(committed, rebuilt),
    diagnostics: [
      {
        code: "GRAPH_STALE",
        severity: "error",
        file: shown,
        line: first + 1,
        col: 1,
        message: `the committed capability graph differs from the one rebuilt from the prompts; ${refresh}`,
      },
    ],
  };
}
