import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { parseDocument } from "yaml";
import { checkGraphFresh, DEFAULT_GRAPH_FILE } from "../../checks/check-graph-fresh.js";
import { promptFileName, scaffoldExecutor, scaffoldPlanner } from "../../checks/scaffold-pair.js";
import { validateSuite } from "../../checks/validate-suite.js";
import { formatDiagnostic } from "../../diagnostics/format-diagnostic.js";
import { RefusalError, UsageError } from "../../errors/errors.js";
import { parseChoice, parsePromptId, parseText } from "../../input/parse-input.js";
import { shellQuote } from "../../run/next-step.js";
import { atomicWriteFile } from "../../store/atomic-write.js";
import { loadSuite, readConfigText } from "../../suite/load-suite.js";
import { promptSelection } from "../../suite/prompt-selection.js";
import { CONFIG_FILE } from "../../suite/suite-config.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { loadSuiteOption } from "../load-suite-option.js";
import { snakeKeys } from "../snake-keys.js";

export interface NewPairOptions extends CommonOptions {
  suite?: string;
  planner: string;
  executor: string;
  plannerTitle: string;
  executorTitle: string;
  category: string;
  risk?: string;
  requires?: string;
  dir?: string;
}

/**
 * `twinlock new-pair`: write a planner and its executor with canonical
 * metadata and every required body block, bump `declared_pairs` when the
 * config declares one, and check that the suite still validates.
 */
export function runNewPair(options: NewPairOptions): CommandResult {
  const plannerId = parsePromptId(options.planner, "--planner");
  const executorId = parsePromptId(options.executor, "--executor");
  if (plannerId === executorId) throw new UsageError("--planner and --executor must be different IDs");
  const risk = options.risk ?? "medium";
  parseChoice(risk, ["low", "medium", "high"], "--risk");
  const category = parseText(options.category, "--category", 200).trim();
  if (!/^[a-z0-9][a-z0-9 _-]*$/i.test(category))
    throw new UsageError(`--category ${JSON.stringify(category)} must be a short name of letters, digits, spaces, _ or -`);
  const plannerTitle = parseText(options.plannerTitle, "--planner-title", 200).trim();
  const executorTitle = parseText(options.executorTitle, "--executor-title", 200).trim();
  if (!plannerTitle || !executorTitle) throw new UsageError("--planner-title and --executor-title must not be empty");
  const requires = (options.requires ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((id) => parsePromptId(id, "--requires"));

  const suite = loadSuiteOption(options.suite);
  for (const id of [plannerId, executorId]) {
    const existing = suite.byId.get(id);
    if (existing) throw new RefusalError(`${id} already exists in the suite (${existing.file}); choose unused IDs`);
  }
  for (const id of requires) if (!suite.byId.has(id)) throw new UsageError(`--requires ${id}: no such prompt in the suite`);
  // By default a folder named after the category, under the fixed start of the first `prompts` glob (`prompts/**/*.md` → `prompts/`).
  const dirRel = options.dir ?? path.join(literalGlobPrefix(suite.config.prompts?.[0]), category.toLowerCase().replace(/[^a-z0-9]+/g, "-"));
  const dir = path.resolve(suite.root, dirRel);
  if (path.relative(suite.root, dir).startsWith(".."))
    throw new UsageError(`--dir ${dirRel} leaves the suite folder; give a folder inside it`);
  const spec = { plannerId, executorId, plannerTitle, executorTitle, category, riskLevel: risk as "low" | "medium" | "high", requires };
  const files = [
    { file: path.join(dir, promptFileName(plannerId, plannerTitle)), text: scaffoldPlanner(spec) },
    { file: path.join(dir, promptFileName(executorId, executorTitle)), text: scaffoldExecutor(spec) },
  ];
  for (const f of files) if (existsSync(f.file)) throw new RefusalError(`${f.file} already exists; remove it or choose other IDs`);
  // With `prompts` globs (a config at a repository root), the new files must be where validate looks.
  const selection = promptSelection(suite.config);
  for (const f of files) {
    const rel = path.relative(suite.root, f.file).split(path.sep).join("/");
    if (!selection.includes(rel))
      throw new UsageError(
        `${rel} would not be read as a prompt: twinlock.yaml prompts are ${(suite.config.prompts ?? ["*.md"]).join(", ")}${suite.config.exclude ? ` minus ${suite.config.exclude.join(", ")}` : ""}; pass --dir inside them`,
      );
  }

  mkdirSync(dir, { recursive: true });
  for (const f of files) atomicWriteFile(f.file, f.text);
  const notes: string[] = [];
  const declared = suite.config.declared_pairs;
  if (declared !== undefined) {
    const configFile = path.join(suite.root, CONFIG_FILE);
    const doc = parseDocument(readConfigText(suite.root) ?? "");
    doc.set("declared_pairs", declared + 1);
    atomicWriteFile(configFile, doc.toString({ flowCollectionPadding: false }));
    notes.push(`declared_pairs in ${CONFIG_FILE}: ${declared} → ${declared + 1}`);
  }
  // Keep the committed capability graph in step, so the suite validates untouched.
  const after = loadSuite(suite.root);
  const graphFile = path.resolve(after.root, after.config.graph_file ?? DEFAULT_GRAPH_FILE);
  if (existsSync(graphFile)) {
    const fresh = checkGraphFresh(after, validateSuite(after, { bodies: false, graph: false }).twins);
    if (fresh.diagnostics.length > 0) {
      atomicWriteFile(graphFile, fresh.rebuilt);
      notes.push(
        `refreshed ${path.relative(process.cwd(), graphFile).startsWith("..") ? graphFile : path.relative(process.cwd(), graphFile)}`,
      );
    }
  }
  const report = validateSuite(loadSuite(suite.root));
  const mine = report.diagnostics.filter((d) => d.promptId === plannerId || d.promptId === executorId);
  const ours = mine.filter((d) => d.severity === "error");
  const resolved = report.pairs.some((p) => p.planner === plannerId && p.executor === executorId);
  const rel = files.map((f) => shownPath(f.file));
  const text = [
    `created pair ${plannerId} → ${executorId}`,
    ...rel.map((f) => `  ${f}`),
    ...notes,
    ...mine.map(formatDiagnostic),
    resolved && ours.length === 0
      ? `validate: ${plannerId} resolves to exactly ${executorId}, bodies pass`
      : `validate: ${ours.length} problems for the new pair`,
    `next: fill in the investigation, then run \`twinlock validate --suite ${shellQuote(shownPath(suite.root))}\``,
  ].join("\n");
  return {
    exitCode: resolved && ours.length === 0 ? 0 : 1,
    text,
    json: snakeKeys({
      ok: resolved && ours.length === 0,
      files: files.map((f) => f.file),
      planner: plannerId,
      executor: executorId,
      problems: mine,
    }),
  };
}

/** The folders a glob starts with before its first wildcard (`prompts/**\/*.md` → `prompts`), or "" for none. */
function literalGlobPrefix(glob: string | undefined): string {
  if (glob === undefined) return "";
  const segments = glob.split("/");
  const fixed: string[] = [];
  for (const segment of segments.slice(0, -1)) {
    if (/[*?[\]{}]/.test(segment)) break;
    fixed.push(segment);
  }
  return fixed.join("/");
}

/** A path as new-pair prints it: relative to the working folder when inside it (`.` for the folder itself), else absolute. */
function shownPath(file: string): string {
  const r = path.relative(process.cwd(), file);
  return r === "" ? "." : r.startsWith("..") || path.isAbsolute(r) ? file : r;
}
