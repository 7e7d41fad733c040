import { createTwoFilesPatch } from "diff";
import { RefusalError } from "../errors/errors.js";
import { diffRecords, type RecordChange } from "../handoff/diff-records.js";
import type { HandoffRecords } from "../handoff/handoff-records.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { readBlob } from "../home/frozen-bytes.js";
import { readFrozenRecords } from "../home/frozen-records.js";
import type { GateHome } from "../home/gate-home.js";
import { readRun } from "../home/run-ledger.js";
import { loadPinnedPolicy } from "../home/suite-pins.js";
import { cleanText } from "../input/clean-text.js";
import { shellQuote } from "../run/next-step.js";
import { requireWorkflow } from "../run/refuse-transition.js";
import type { RunEvent, Settings, Workflow } from "../run/run-schema.js";
import { consentQuestion } from "./consent-pair-execution.js";
import { reviewInvitation } from "./pair-status.js";

/** One hashed file of a frozen revision, with its text (when it is text) and its diff against the previous revision. */
export interface PresentedFile {
  path: string;
  size: number;
  sha256: string;
  change: "added" | "changed" | "unchanged";
  /** The file's text, or null for a binary file. */
  text: string | null;
  /** Unified diff against the previous revision, or null when unchanged, binary or there is none. */
  diff: string | null;
}

export interface Presentation {
  planner: string;
  executor: string;
  revision: number;
  hash: string;
  state: string;
  changes: RecordChange[];
  files: PresentedFile[];
  removedFiles: string[];
  markdown: string;
}

/**
 * The frozen plan as readable Markdown for the reviewer (SPEC §6, §9
 * `present`), rendered from the frozen bytes in the gate home and never from
 * anything the run file holds: findings with their evidence, actions with
 * risk, rollback and verification, criteria, open unknowns, every hashed
 * file (report.md included) with its diff against the previous revision,
 * the hash, and the exact commands to decide.
 */
export function presentPlan(runFile: string, planner: string, home: GateHome): Presentation {
  const run = readRun(runFile, home);
  const wf = requireWorkflow(run.state.workflows, planner);
  if (!wf.handoff)
    throw new RefusalError(
      `${planner} has no frozen handoff yet; freeze it with \`twinlock freeze-pair-handoff ${runFile} ${planner} --handoff DIR\``,
    );
  const records = readFrozenRecords(home, wf.handoff.files);
  const prevEntry = wf.history.find((h) => h.revision === wf.revision - 1);
  const prevFiles = prevEntry ? frozenFilesAt(run.file.events, prevEntry.seq) : [];
  const prevRecords = prevEntry ? readFrozenRecords(home, prevFiles) : undefined;
  const changes = prevEntry ? diffRecords(prevRecords, records, prevFiles, wf.handoff.files) : [];
  const files = presentFiles(home, wf.handoff.files, prevEntry ? prevFiles : undefined);
  const current = new Set(wf.handoff.files.map((f) => f.path));
  const removedFiles = prevFiles.filter((f) => !current.has(f.path)).map((f) => f.path);
  let sign = false;
  try {
    sign = loadPinnedPolicy(home, run.state.suite).config.policies?.require_signed_receipts === true;
  } catch {
    sign = true;
  }
  const markdown = renderMarkdown(runFile, wf, records, changes, prevEntry !== undefined, sign, run.state.settings, files, removedFiles);
  return {
    planner: wf.planner,
    executor: wf.executor,
    revision: wf.revision,
    hash: wf.handoff.hash,
    state: wf.state,
    changes,
    files,
    removedFiles,
    markdown,
  };
}

/** The file list a freeze event recorded (replay has checked it hashes to the frozen hash). */
function frozenFilesAt(events: readonly RunEvent[], seq: number): ManifestEntry[] {
  const event = events[seq - 1];
  return event?.type === "handoff_frozen" ? (event.data.files as ManifestEntry[]) : [];
}

/** Each frozen file with its text and, when it changed, a line diff against the previous revision. */
export function presentFiles(
  home: GateHome,
  files: readonly ManifestEntry[],
  previous: readonly ManifestEntry[] | undefined,
): PresentedFile[] {
  const before = new Map((previous ?? []).map((f) => [f.path, f]));
  return files.map((f) => {
    const text = asText(readBlob(home, f));
    const old = before.get(f.path);
    const change = previous === undefined ? "unchanged" : !old ? "added" : old.sha256 !== f.sha256 ? "changed" : "unchanged";
    let diff: string | null = null;
    if (change !== "unchanged" && text !== null) {
      const oldText = old ? asText(readBlob(home, old)) : "";
      if (oldText !== null)
        diff = createTwoFilesPatch(old ? `a/${f.path}` : "/dev/null", `b/${f.path}`, oldText, text, "", "", { context: 3 })
          .split("\n")
          .slice(2)
          .join("\n");
    }
    return { path: f.path, size: f.size, sha256: f.sha256, change, text, diff };
  });
}

/** UTF-8 text without NUL bytes, or null for a binary file. */
function asText(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes) ? text : null;
}

function renderMarkdown(
  runFile: string,
  wf: Workflow,
  r: HandoffRecords,
  changes: RecordChange[],
  hasPrevious: boolean,
  sign: boolean,
  settings: Settings,
  files: PresentedFile[],
  removedFiles: string[],
): string {
  const key = sign ? " --key FILE" : "";
  const h = wf.handoff as NonNullable<Workflow["handoff"]>;
  const out: string[] = [];
  const t = cleanText;
  out.push(`# Plan review: ${wf.planner} → ${wf.executor} (${t(wf.executor_title)})`, "");
  out.push(`- revision **${h.revision}**, frozen ${h.frozen_at} by ${t(h.frozen_by)}`);
  out.push(`- handoff hash \`${h.hash}\``);
  out.push(
    `- state \`${wf.state}\`; handoff folder ${code(h.dir)}${h.dir.startsWith("/") ? "" : " (relative to the run file)"}; shown from the frozen bytes in the gate home, ${h.files.length} files hashed:`,
  );
  for (const f of h.files) out.push(`  - ${code(f.path)} ${f.size} bytes, sha256 ${f.sha256.slice(0, 12)}…`);
  out.push("");
  if (h.unchanged_because) out.push(`> Re-frozen without changes. The planner says why: ${t(h.unchanged_because)}`, "");

  const lastFeedback = wf.reviews.filter((x) => x.revision === h.revision - 1 && x.decision === "changes_requested").pop();
  if (hasPrevious) {
    out.push(`## What changed since revision ${h.revision - 1}`, "");
    if (lastFeedback?.feedback) out.push(`Requested by ${t(lastFeedback.reviewer)}: "${t(lastFeedback.feedback)}"`, "");
    if (changes.length === 0) out.push("- nothing in the records changed", "");
    else {
      for (const c of changes) {
        out.push(`- **${c.change}** \`${c.marker}\`${c.summary ? ` — ${t(c.summary)}` : ""}`);
        for (const f of c.fields ?? []) out.push(`  - ${f.field}: ~~${t(show(f.before))}~~ → ${t(show(f.after))}`);
      }
      out.push("");
    }
  }

  const evidence = new Map(r.evidence.evidence.map((e) => [e.id, e]));
  out.push(`## Findings (${r.findings.findings.length})`, "");
  for (const f of r.findings.findings) {
    out.push(`### \`#FINDING:${f.id}\` ${t(f.summary)}${f.confidence ? ` (confidence: ${f.confidence})` : ""}`, "");
    for (const ref of f.evidence) {
      const id = ref.replace(/^@EVIDENCE:/, "");
      const e = evidence.get(id);
      out.push(`- \`@EVIDENCE:${id}\`${e ? ` ${t(e.source)}: ${t(e.observed)}` : ""}`);
    }
    out.push("");
  }
  const addressed = new Set(r.actions.actions.flatMap((a) => a.findings.map((x) => x.replace(/^#FINDING:/, ""))));
  const unaddressed = r.findings.findings.filter((f) => !addressed.has(f.id)).map((f) => `\`#FINDING:${f.id}\``);
  if (unaddressed.length > 0) out.push(`> Not addressed by any action: ${unaddressed.join(", ")}`, "");
  out.push(`## Actions (${r.actions.actions.length})`, "");
  for (const a of r.actions.actions) {
    out.push(`### \`+ACTION:${a.id}\` ${t(a.summary)}`, "");
    out.push(`- target: ${t(a.target)}`);
    out.push(`- risk: **${a.risk}**`);
    out.push(`- rollback: ${t(a.rollback)}`);
    out.push(`- addresses: ${a.findings.map((x) => `\`#FINDING:${x.replace(/^#FINDING:/, "")}\``).join(", ")}`);
    out.push(`- verified by: ${a.verifies.map((x) => `\`=VERIFY:${x.replace(/^=VERIFY:/, "")}\``).join(", ")}`);
    if (a.depends_on.length) out.push(`- after: ${a.depends_on.map((x) => `\`+ACTION:${x.replace(/^\+ACTION:/, "")}\``).join(", ")}`);
    out.push("");
  }
  out.push(`## Acceptance criteria (${r.criteria.criteria.length})`, "");
  for (const c of r.criteria.criteria) out.push(`- \`=VERIFY:${c.id}\` ${t(c.criterion)} — method: ${t(c.method)}`);
  out.push("");
  const open = r.findings.unknowns.filter((u) => u.status === "open");
  out.push(`## Open unknowns (${open.length})`, "");
  if (open.length === 0) out.push("- none");
  for (const u of open) out.push(`- \`?UNKNOWN:${u.id}\` ${t(u.question)}${u.owner ? ` (owner: ${t(u.owner)})` : ""}`);
  out.push("");
  if (r.actions.stops.length) {
    out.push("## Stops", "");
    for (const s of r.actions.stops)
      out.push(`- \`!STOP:${s.reason}\` ${s.resolved ? "resolved" : "**unresolved**"}${s.notes ? ` — ${t(s.notes)}` : ""}`);
    out.push("");
  }
  out.push(`## Files (${files.length})`, "");
  for (const f of files) {
    const mark = f.change === "unchanged" ? "" : ` — **${f.change}** since revision ${h.revision - 1}`;
    out.push(`### ${code(f.path)} (${f.size} bytes, sha256 ${f.sha256.slice(0, 12)}…)${mark}`, "");
    if (f.text === null) out.push("(binary file: not shown)", "");
    else {
      if (f.diff !== null) out.push(fence(cleanBlock(f.diff), "diff"), "");
      out.push(fence(cleanBlock(f.text), f.path.endsWith(".md") ? "markdown" : f.path.endsWith(".json") ? "json" : ""), "");
    }
  }
  for (const p of removedFiles) out.push(`### ${code(p)} — **removed** since revision ${h.revision - 1}`, "");
  const run = shellQuote(runFile);
  out.push("## Decide", "");
  if (sign)
    out.push("This suite requires signed receipts: pass your reviewer key with `--key FILE` (or set TWINLOCK_KEY in your own shell).", "");
  if (wf.state === "plan_review_pending") {
    out.push(reviewInvitation(wf.planner, h.revision, h.hash), "", "```sh");
    out.push(
      `twinlock review-pair-plan ${run} ${wf.planner} --decision changes_requested --feedback "what to change" --handoff-hash ${h.hash}${key}`,
    );
    out.push(`twinlock review-pair-plan ${run} ${wf.planner} --decision approved --handoff-hash ${h.hash}${key}`);
    out.push(`twinlock review-pair-plan ${run} ${wf.planner} --decision declined --feedback "why" --handoff-hash ${h.hash}${key}`);
    out.push("```");
  } else if (wf.state === "execution_consent_pending") {
    out.push(consentQuestion(wf, settings), "", "```sh");
    out.push(`twinlock consent-pair-execution ${run} ${wf.planner} --approve --handoff-hash ${h.hash}${key}`);
    out.push(`twinlock consent-pair-execution ${run} ${wf.planner} --decline --handoff-hash ${h.hash}${key}`);
    out.push("```");
  } else {
    out.push(`The workflow is \`${wf.state}\`; see \`twinlock pair-status ${run} ${wf.planner}\` for the next step.`);
  }
  return `${out.join("\n")}\n`;
}

/** File text for the terminal: control sequences replaced, lines and tabs kept. */
function cleanBlock(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "�");
}

/** Agent-chosen text (a path) as an inline code span whose backticks outnumber any run inside, so it cannot end early. */
function code(s: string): string {
  const text = cleanText(s);
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

/** A fenced block longer than any backtick run inside, so the content cannot close it and forge what follows. */
function fence(body: string, lang: string): string {
  const longest = Math.max(2, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const f = "`".repeat(longest + 1);
  return `${f}${lang}\n${body}${body.endsWith("\n") ? "" : "\n"}${f}`;
}

function show(value: unknown): string {
  if (value === null) return "(none)";
  return typeof value === "string" ? value : JSON.stringify(value);
}
