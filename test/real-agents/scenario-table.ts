import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { AgentRun } from "./run-agent.js";
import { doneContent } from "./scripted-action.js";

/** One scenario as one real CLI ran it: what the suite expects, what the run did, and whether that is what was expected. */
export interface ScenarioRow {
  tool: string;
  scenario: string;
  expected: string;
  observed: string;
  /** The test's assertions held. */
  holds: boolean;
  /** Why the tool is known to let this through today (the test is `it.fails`), or undefined. */
  openToday?: string;
}

/** What `twinlock hooks status` printed for one tool once `hooks install` had run, and how it exited. */
export interface StatusRecord {
  tool: string;
  setup: string;
  exitCode: number | null;
  output: string;
}

const rows: ScenarioRow[] = [];
const statuses: StatusRecord[] = [];

/** Keeps one scenario's row for the table the suite writes at its end. */
export function recordScenario(row: ScenarioRow): void {
  rows.push(row);
}

/** Keeps what `hooks status` said for the table's second part. */
export function recordHooksStatus(record: StatusRecord): void {
  statuses.push(record);
}

/** The longest text of a tool's deny reason a cell quotes. */
const REASON_CHARS = 160;

/** The hook's own words in a tool result (`twinlock: …`, `no twinlock session …`), not a path under a `twinlock-…` folder. */
const HOOK_WORDS = /twinlock[: ]/;

/** The tool result the hook's reason reached the model in (the first in the hook's words), one line and short, or undefined. */
function hookReason(run: AgentRun): string | undefined {
  const found = run.toolResults.find((t) => HOOK_WORDS.test(t));
  if (found === undefined) return undefined;
  const line = found.replace(/\s+/g, " ").trim();
  return line.length > REASON_CHARS ? `${line.slice(0, REASON_CHARS)}…` : line;
}

/**
 * What a run did, in words, from what it left (the file, the run file, the tool results the model got back, exec's
 * and plan's notes): whether the call was done, what the hook answered, whether the sandbox ran and how the CLI ended.
 */
export function observe(run: AgentRun): string {
  const parts: string[] = [];
  const kind = run.action.kind;
  if (kind === "freeze") {
    const hash = String(JSON.parse(run.fileAfter ?? "{}").state?.workflows?.["MD-29"]?.handoff?.hash ?? "");
    parts.push(hash.startsWith("sha256:") ? `handoff frozen (${hash.slice(0, 19)}…)` : "handoff not frozen");
  } else if (kind === "outward") {
    const tool = run.action.tool;
    const offered = run.requests.some((r) => JSON.stringify(r.body ?? "").includes(`"name":"${tool}"`));
    parts.push(offered ? `${tool} called` : `the CLI did not offer ${tool} to the model`);
  } else if (kind === "reads") {
    parts.push(`${run.requests.length} model requests, the file's text in the results`);
  } else if (run.fileAfter === doneContent(run.action)) parts.push("done");
  else if (run.fileAfter === run.before) parts.push("not done (file as before)");
  else parts.push(`file changed otherwise (${JSON.stringify((run.fileAfter ?? "").slice(0, 40))})`);
  const reason = hookReason(run);
  if (reason) parts.push(`hook's answer reached the model: "${reason}"`);
  else if (run.hook === "uninstalled") parts.push("no hook");
  else parts.push("no deny reason reached the model");
  if (run.hook === "killed" || run.hook === "timed-out") parts.push(`failing hook started ${run.hookCalls.length}x`);
  if (run.stderr.includes("runs in a bubblewrap sandbox")) parts.push("in the sandbox");
  const stray = /left (a new entry|\d+ new entries) beside the file targets/.exec(run.stderr);
  if (stray) parts.push(`exec: ${stray[0]}`);
  parts.push(`exit ${run.exitCode ?? run.signal}, ${Math.round(run.durationMs / 100) / 10} s`);
  return parts.join("; ");
}

/** A table cell: one line, its pipes escaped. */
function cell(text: string): string {
  return text.replace(/\r?\n/g, " ").replace(/\|/g, "\\|");
}

/**
 * The closing table as markdown: the versions, one row per scenario (tool × scenario, expected, observed, holds), in
 * the order they ran, and what `hooks status` said for each tool. Pure: the rows and records are its input.
 */
export function scenarioTable(input: {
  versions: Record<string, string>;
  rows: readonly ScenarioRow[];
  statuses: readonly StatusRecord[];
  generatedAt: string;
}): string {
  const held = input.rows.filter((r) => r.holds).length;
  const open = input.rows.filter((r) => !r.holds && r.openToday).length;
  const out = [
    "# The real agent CLIs under the twinlock hook: scenarios",
    "",
    `Written by test/real-agents/real-agents.test.ts (TWINLOCK_REAL_AGENTS=1) from the runs' observed results, ${input.generatedAt}.`,
    `Versions: ${Object.entries(input.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}.`,
    "",
    `${input.rows.length} scenarios: ${held} hold, ${open} open today (the tool's own behaviour, marked it.fails), ${input.rows.length - held - open} failing.`,
    "",
    "| Tool | Scenario | Expected | Observed | Holds |",
    "| --- | --- | --- | --- | --- |",
    ...input.rows.map(
      (r) =>
        `| ${cell(r.tool)} | ${cell(r.scenario)} | ${cell(r.expected)} | ${cell(r.observed)} | ${r.holds ? "yes" : r.openToday ? `no, open today: ${cell(r.openToday)}` : "**no (failing)**"} |`,
    ),
    "",
    "## `twinlock hooks status` after `twinlock hooks install --agent X --project`",
    "",
  ];
  for (const s of input.statuses) out.push(`### ${s.tool}: ${s.setup} (exit ${s.exitCode})`, "", "```", s.output.trimEnd(), "```", "");
  return `${out.join("\n").trimEnd()}\n`;
}

/** Writes the table of everything recorded so far to `file` (its folder made), when anything was recorded. */
export function writeScenarioTable(file: string, versions: Record<string, string>): void {
  if (rows.length === 0 && statuses.length === 0) return;
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, scenarioTable({ versions, rows, statuses, generatedAt: new Date().toISOString() }));
}
