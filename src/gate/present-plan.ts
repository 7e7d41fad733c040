import { RefusalError } from "../errors/errors.js";
import { diffRecords, type RecordChange } from "../handoff/diff-records.js";
import type { HandoffRecords } from "../handoff/handoff-records.js";
import { shellQuote } from "../run/next-step.js";
import { frozenRecords } from "../run/plan-action-ids.js";
import { requireWorkflow } from "../run/refuse-transition.js";
import type { RunEvent, Settings, Workflow } from "../run/run-schema.js";
import { readRunFile } from "../store/run-store.js";
import { consentQuestion } from "./consent-pair-execution.js";
import { reviewInvitation, signingHint } from "./pair-status.js";

export interface Presentation {
  planner: string;
  executor: string;
  revision: number;
  hash: string;
  state: string;
  changes: RecordChange[];
  markdown: string;
}

/**
 * The frozen plan as readable Markdown for the reviewer (SPEC §6 `present`):
 * findings with their evidence, actions with risk, rollback and
 * verification, acceptance criteria, open unknowns, what changed since the
 * previous revision, the hash, and the exact commands to decide.
 */
export function presentPlan(runFile: string, planner: string): Presentation {
  const run = readRunFile(runFile);
  const wf = requireWorkflow(run.state.workflows, planner);
  if (!wf.handoff)
    throw new RefusalError(
      `${planner} has no frozen handoff yet; freeze it with \`twinlock freeze-pair-handoff ${runFile} ${planner} --handoff DIR\``,
    );
  const records = frozenRecords(run.file.events, wf) as unknown as HandoffRecords;
  const prevEntry = wf.history.find((h) => h.revision === wf.revision - 1);
  const prevRecords = prevEntry ? (frozenRecords(run.file.events, wf, prevEntry.revision) as unknown as HandoffRecords) : undefined;
  const prevFiles = prevEntry ? ((run.file.events[prevEntry.seq - 1] as RunEvent).data.files as Workflow["handoff"] & never) : [];
  const changes = prevEntry ? diffRecords(prevRecords, records, prevFiles ?? [], wf.handoff.files) : [];
  const markdown = renderMarkdown(
    runFile,
    wf,
    records,
    changes,
    prevEntry !== undefined,
    signingHint(run.state.suite.root),
    run.state.settings,
  );
  return { planner: wf.planner, executor: wf.executor, revision: wf.revision, hash: wf.handoff.hash, state: wf.state, changes, markdown };
}

function renderMarkdown(
  runFile: string,
  wf: Workflow,
  r: HandoffRecords,
  changes: RecordChange[],
  hasPrevious: boolean,
  sign: boolean,
  settings: Settings,
): string {
  const key = sign ? " --key FILE" : "";
  const h = wf.handoff as NonNullable<Workflow["handoff"]>;
  const out: string[] = [];
  const t = cleanText;
  out.push(`# Plan review: ${wf.planner} → ${wf.executor} (${t(wf.executor_title)})`, "");
  out.push(`- revision **${h.revision}**, frozen ${h.frozen_at} by ${t(h.frozen_by)}`);
  out.push(`- handoff hash \`${h.hash}\``);
  out.push(`- state \`${wf.state}\`; handoff folder \`${t(h.dir)}\` (relative to the run file), ${h.files.length} files hashed:`);
  for (const f of h.files) out.push(`  - \`${t(f.path)}\` ${f.size} bytes, sha256 ${f.sha256.slice(0, 12)}…`);
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

/** Handoff text is the agent's; strip terminal control sequences so it cannot rewrite what the reviewer sees. */
export function cleanText(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "�").replace(/\n+/g, " ");
}

function show(value: unknown): string {
  if (value === null) return "(none)";
  return typeof value === "string" ? value : JSON.stringify(value);
}
