import { createHash } from "node:crypto";
import { IntegrityError, RefusalError } from "../errors/errors.js";
import type { boundRecordChanges, RecordChange } from "../handoff/diff-records.js";
import type { HandoffModel, RecordBase, RecordKind } from "../handoff/handoff-model.js";
import { MARKERS } from "../handoff/handoff-records.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { handoffFormatRecipe } from "../handoff/select-handoff-format.js";
import { unshownFields, unshownFieldsAfter } from "../handoff/unshown-fields.js";
import { loadPinnedPolicy } from "../home/suite-pins.js";
import { cleanLines, cleanText } from "../input/clean-text.js";
import { markdownTableCell } from "../input/markdown-table-cell.js";
import { runOffThread } from "../offload/run-off-thread.js";
import { shellQuote } from "../run/next-step.js";
import { requireWorkflow } from "../run/refuse-transition.js";
import type { Execution, FreezeReceipt, RunEvent, Settings, Workflow } from "../run/run-schema.js";
import type { RunStore } from "../store/run-store.js";
import { consentQuestion } from "./consent-pair-execution.js";
import { reviewInvitation } from "./pair-status.js";
import { describeDiffNotShown, describeNotWhole, type PresentedFile, presentFiles } from "./present-files.js";
import { presentFrozenRecordsIn } from "./present-frozen-records.js";
import { describeRecordsNotShown, type PresentedRecords, type RecordsNotShown } from "./present-records.js";
import { rememberPresentation } from "./presentation-cache.js";
import type { CommentItemChange, ReviewComment } from "./review-comments.js";

export type { PresentedFile } from "./present-files.js";

export interface Presentation {
  planner: string;
  executor: string;
  /** The revision shown (the latest unless one was asked for). */
  revision: number;
  latestRevision: number;
  hash: string;
  /** The workflow's state now. */
  state: string;
  frozenAt: string;
  frozenBy: string;
  /**
   * The records of the revision shown, read from its frozen bytes: every
   * record whole, or (over RECORD_SHOW_BUDGET) the first of each kind, as
   * `recordsNotShown` says.
   */
  model: HandoffModel;
  /** What of the records is not shown, how many of each kind there are, and the sentence saying so; null when all are shown whole. */
  recordsNotShown: (RecordsNotShown & { totals: PresentedRecords["totals"]; notice: string }) | null;
  /** Record changes against the previous revision (empty for the first): all of them, or the first within RECORD_DIFF_BUDGET. */
  changes: RecordChange[];
  /** How many record changes there are in all (more than `changes` holds when the rest are not shown). */
  changesTotal: number;
  previousRevision: number | null;
  /** The files listed: every file, or (over LISTED_FILES) the changed and added ones first, then unchanged ones, up to that many. */
  files: PresentedFile[];
  /** Files removed since the previous revision: every one, or the first LISTED_FILES. */
  removedFiles: string[];
  /** How many files the revision holds and how many it removed, when not all are listed; null when all are. */
  filesNotListed: FilesNotListed | null;
  /**
   * The comments of the request for changes on the previous revision, each
   * with whether the item it names changed in this one (empty when there
   * was no such request or it had no comments).
   */
  previousComments: Array<ReviewComment & { change: CommentItemChange }>;
  /** The comments of a request for changes on this revision: what the planner is asked to change, by item. */
  requestedComments: ReviewComment[];
  markdown: string;
}

/** The most files one presentation lists (and the most removed files it names): a handoff may hold any number. */
export const LISTED_FILES = 500;

/** Files a presentation does not list: how many there are in all, of each change, and the sentence saying so. */
export interface FilesNotListed {
  total: number;
  listed: number;
  changed: number;
  removed: number;
  removedListed: number;
  notice: string;
}

/**
 * The files to list, within LISTED_FILES: those added or changed since the
 * previous revision first (in the manifest's order), then unchanged ones,
 * and what is left out said in one sentence.
 */
function filesToList(
  shown: readonly ManifestEntry[],
  previous: readonly ManifestEntry[] | undefined,
  removed: readonly string[],
  hash: string,
): { listed: ManifestEntry[]; removedListed: string[]; notListed: FilesNotListed | null } {
  const before = new Map((previous ?? []).map((f) => [f.path, f.sha256]));
  const isChange = (f: ManifestEntry) => previous !== undefined && before.get(f.path) !== f.sha256;
  const changed = shown.filter(isChange);
  const chosen = new Set([...changed, ...shown.filter((f) => !isChange(f))].slice(0, LISTED_FILES));
  const listed = shown.filter((f) => chosen.has(f));
  const removedListed = removed.slice(0, LISTED_FILES);
  if (listed.length === shown.length && removedListed.length === removed.length) return { listed, removedListed, notListed: null };
  const parts = [`${listed.length} of the revision's ${shown.length} files are listed`];
  if (previous !== undefined) parts.push(`every added or changed file first (${changed.length} in all)`);
  if (removedListed.length < removed.length) parts.push(`and ${removedListed.length} of the ${removed.length} removed`);
  const notice = `${parts.join(", ")}. Every file is in the handoff hash ${hash}, which the decision binds; the run's freeze event names each one with its size and sha256.`;
  return {
    listed,
    removedListed,
    notListed: {
      total: shown.length,
      listed: listed.length,
      changed: changed.length,
      removed: removed.length,
      removedListed: removedListed.length,
      notice,
    },
  };
}

/**
 * The frozen plan as readable Markdown for the reviewer (SPEC §6, §9
 * `present`), rendered from the frozen bytes in the gate home and never from
 * anything the run file holds: findings with their evidence, actions with
 * risk, rollback and verification, criteria, open unknowns, every hashed
 * file (report.md included) with its diff against the previous revision,
 * the hash, and the exact commands to decide. Its size is bounded whatever
 * the handoff's: records by RECORD_SHOW_BUDGET and their changes by
 * RECORD_DIFF_BUDGET (read, diffed and cut once per revision, then kept),
 * files by SHOW_BUDGET; what is left out is said before it and beside the
 * decision, with the sha256 of where it is whole.
 */
export async function presentPlan(
  store: RunStore,
  runFile: string,
  planner: string,
  options: {
    revision?: number;
    /** The earlier revision to compare with (what changed since, and the comments asked on it); default: the one before. */
    against?: number;
  } = {},
): Promise<Presentation> {
  const home = store.home;
  const run = await store.read(runFile);
  const wf = requireWorkflow(run.state.workflows, planner);
  if (!wf.handoff)
    throw new RefusalError(
      `${planner} has no frozen handoff yet; freeze it with \`twinlock freeze-pair-handoff ${runFile} ${planner} --handoff DIR\``,
      { code: "NOT_FROZEN" },
    );
  const revision = options.revision ?? wf.revision;
  const entry = wf.history.find((h) => h.revision === revision);
  if (!entry)
    throw new RefusalError(`${planner} has no revision ${revision}; its revisions are 1 to ${wf.revision}`, {
      code: "UNKNOWN_REVISION",
      latest: wf.revision,
    });
  const shown = revision === wf.revision ? wf.handoff.files : frozenFilesAt(run.file.events, entry.seq);
  // The format is the pinned suite's, never one the run file or the handoff names; a broken pin refuses.
  const policy = loadPinnedPolicy(home, run.state.suite);
  const base = options.against ?? revision - 1;
  if (options.against !== undefined && !(Number.isInteger(base) && base >= 1 && base < revision))
    throw new RefusalError(`${planner}'s revision ${revision} is compared with an earlier revision, 1 to ${revision - 1}, not ${base}`, {
      code: "UNKNOWN_REVISION",
      latest: wf.revision,
    });
  const prevEntry = wf.history.find((h) => h.revision === base);
  const prevFiles = prevEntry ? frozenFilesAt(run.file.events, prevEntry.seq) : [];
  const scope = run.state.settings.actions;
  const requestOn = (rev: number) => wf.reviews.filter((x) => x.revision === rev && x.decision === "changes_requested").pop();
  const commented = prevEntry ? (requestOn(prevEntry.revision)?.comments ?? []) : [];
  const requestedComments = requestOn(revision)?.comments ?? [];
  // The frozen bytes under a hash never change: their records are read, diffed and cut to the budget once per
  // revision (and previous one, format and scope), however often the plan is asked for.
  const key = [
    home.dir,
    policy.policyDigest,
    entry.hash,
    prevEntry?.hash ?? "",
    scope === "all" ? "all" : createHash("sha256").update(JSON.stringify(scope)).digest("hex"),
    commented.length === 0 ? "" : createHash("sha256").update(JSON.stringify(commented)).digest("hex"),
  ].join("\n");
  // On a worker thread: records may be 16 MiB each, and reading and cutting them is one piece of work per revision.
  const recipe = handoffFormatRecipe(policy.handoffFormat);
  const input = { home: { dir: home.dir, id: home.id }, shown, previous: prevEntry ? prevFiles : undefined, scope, commented };
  const { records, outside, changes, commentChanges } = await rememberPresentation(key, async () =>
    recipe ? runOffThread("presentFrozenRecords", { ...input, format: recipe }) : presentFrozenRecordsIn(policy.handoffFormat, input),
  );
  const current = new Set(shown.map((f) => f.path));
  const removed = prevFiles.filter((f) => !current.has(f.path)).map((f) => f.path);
  const { listed, removedListed: removedFiles, notListed } = filesToList(shown, prevEntry ? prevFiles : undefined, removed, entry.hash);
  const files = await presentFiles(home, listed, prevEntry ? prevFiles : undefined);
  const sign = policy.config.policies?.require_signed_receipts === true;
  const frozen = run.file.events[entry.seq - 1];
  // An earlier revision is shown as its own freeze recorded it (folder, time, who, the planner's note), not the latest's.
  const shownWf = revision === wf.revision ? wf : { ...wf, revision, handoff: handoffFrozenBy(frozen, entry.hash, shown) };
  const notice = describeRecordsNotShown(records, entry.hash);
  const previousComments = commented.map((c, i) => ({ ...c, change: commentChanges[i] ?? ("changed" as const) }));
  const markdown = renderMarkdown(
    runFile,
    shownWf,
    records,
    notice,
    outside,
    changes,
    prevEntry?.revision ?? null,
    sign,
    run.state.settings,
    files,
    removedFiles,
    notListed,
    { previous: previousComments, requested: requestedComments },
  );
  return {
    planner: wf.planner,
    executor: wf.executor,
    revision,
    latestRevision: wf.revision,
    hash: entry.hash,
    state: wf.state,
    frozenAt: entry.frozen_at,
    frozenBy: frozen?.actor ?? "unknown",
    model: records.model,
    recordsNotShown: records.notShown && notice ? { ...records.notShown, totals: records.totals, notice } : null,
    changes: changes.changes,
    changesTotal: changes.total,
    previousRevision: prevEntry ? prevEntry.revision : null,
    files,
    removedFiles,
    filesNotListed: notListed,
    previousComments,
    requestedComments,
    markdown,
  };
}

/** The frozen handoff as the freeze event `event` recorded it (replay has checked the event against the run). */
function handoffFrozenBy(event: RunEvent | undefined, hash: string, files: ManifestEntry[]): NonNullable<Workflow["handoff"]> {
  if (event?.type !== "handoff_frozen") throw new IntegrityError("the run's history names a freeze that is not in its events");
  const d = event.data as { revision: number; dir: string; receipt: FreezeReceipt; unchanged_because: string | null };
  return {
    revision: d.revision,
    hash,
    dir: d.dir,
    files,
    frozen_at: event.at,
    frozen_by: d.receipt.by,
    receipt: d.receipt,
    unchanged_because: d.unchanged_because,
  };
}

/** One comment as a Markdown list item's text: the item it names (a record by its marker, a file line in code) and the words. */
function commentLine(c: ReviewComment): string {
  const marker = { evidence: MARKERS.evidence, finding: MARKERS.finding, action: MARKERS.action, criterion: MARKERS.criterion, file: "" }[
    c.kind
  ];
  return `${c.kind === "file" ? `line ${code(c.item)}` : `\`${marker}${cleanText(c.item)}\``}: ${cleanText(c.text).replace(/\s+/g, " ")}`;
}

/** The file list a freeze event recorded (replay has checked it hashes to the frozen hash). */
function frozenFilesAt(events: readonly RunEvent[], seq: number): ManifestEntry[] {
  const event = events[seq - 1];
  return event?.type === "handoff_frozen" ? (event.data.files as ManifestEntry[]) : [];
}

function renderMarkdown(
  runFile: string,
  wf: Workflow,
  presented: PresentedRecords,
  notice: string | null,
  outsideScope: { ids: string[]; total: number },
  bounded: ReturnType<typeof boundRecordChanges>,
  previous: number | null,
  sign: boolean,
  settings: Settings,
  files: PresentedFile[],
  removedFiles: string[],
  notListed: FilesNotListed | null,
  comments: { previous: Presentation["previousComments"]; requested: ReviewComment[] },
): string {
  const key = sign ? " --key FILE" : "";
  const r = presented.model;
  const changes = bounded.changes;
  const h = wf.handoff as NonNullable<Workflow["handoff"]>;
  const out: string[] = [];
  const t = cleanText;
  out.push(`# Plan review: ${wf.planner} → ${wf.executor} (${t(wf.executor_title)})`, "");
  out.push(`- revision **${h.revision}**, frozen ${h.frozen_at} by ${t(h.frozen_by)}`);
  out.push(`- handoff hash \`${h.hash}\`; records read as the pinned suite's **${r.format}** format`);
  out.push(
    `- state \`${wf.state}\`; handoff folder ${code(h.dir)}${h.dir.startsWith("/") ? "" : " (relative to the run file)"}; shown from the frozen bytes the gate keeps, ${h.files.length} files hashed:`,
  );
  for (const f of files) out.push(`  - ${code(f.path)} ${f.size} bytes, sha256 ${f.sha256.slice(0, 12)}…`);
  if (notListed !== null) out.push(`  - … ${notListed.total - notListed.listed} more files not listed`);
  out.push("");
  if (notListed !== null) out.push(`> **Not every file is listed.** ${t(notListed.notice)}`, "");
  // Said before any record, and again beside the decision: no reader takes the part shown for the whole plan.
  const readWhole = `To read every record: the frozen files named above, or after admission \`twinlock checkout ${shellQuote(runFile)} ${wf.executor} DIR\`.`;
  if (notice !== null) out.push(`> **Not the whole plan.** ${t(notice)}`, ">", `> ${readWhole}`, "");
  // The same bytes again: the reviewer asked for changes and the planner says why none were needed, or (with no such
  // request, the only other case the gate allows) a re-pin voided the decisions on them. Said by the gate, not the planner.
  const sameAsBefore = wf.history.find((x) => x.revision === h.revision - 1)?.hash === h.hash;
  const askedForChanges = wf.reviews.some((x) => x.revision === h.revision - 1 && x.decision === "changes_requested");
  if (sameAsBefore && !askedForChanges)
    out.push(
      `> Re-frozen without changes: a re-pin of the suite (its policy or ${wf.executor}'s prompt file) voided the decisions on revision ${h.revision - 1}, so this same plan is reviewed again.`,
      "",
    );
  if (h.unchanged_because) out.push(`> Re-frozen without changes. The planner says why: ${t(h.unchanged_because)}`, "");
  // The run's scope, fixed when it began: an action of the plan outside it will not be admitted, whatever is approved.
  if (settings.actions !== "all") {
    const outside = outsideScope.ids.map((id) => `\`${MARKERS.action}${t(id)}\``);
    if (outsideScope.total > outside.length) outside.push(`and ${outsideScope.total - outside.length} more`);
    out.push(
      `> This run may execute only ${settings.actions.map((id) => `\`${MARKERS.action}${t(id)}\``).join(", ")}${outsideScope.total > 0 ? `; ${outside.join(", ")} ${outsideScope.total === 1 ? "is" : "are"} outside its scope` : ""}.`,
      "",
    );
  }

  const lastFeedback = wf.reviews.filter((x) => x.revision === previous && x.decision === "changes_requested").pop();
  if (previous !== null) {
    out.push(`## What changed since revision ${previous}`, "");
    if (lastFeedback?.feedback) out.push(`Requested by ${t(lastFeedback.reviewer)}: "${t(lastFeedback.feedback)}"`, "");
    if (comments.previous.length > 0) {
      out.push(`Comments by ${t(lastFeedback?.reviewer ?? "the reviewer")} on revision ${previous}, and whether each item changed:`, "");
      for (const c of comments.previous) out.push(`- ${commentLine(c)} — **${c.change}**`);
      out.push("");
    }
    if (changes.length === 0) out.push("- nothing in the records changed", "");
    else {
      for (const c of changes) {
        // A file is named as a file (`file report.md` in code reads as a command); a record by its marker.
        const what = c.marker.startsWith("file ") ? `file \`${t(c.marker.slice(5))}\`` : `\`${t(c.marker)}\``;
        out.push(`- **${c.change}** ${what}${c.summary ? ` — ${t(c.summary)}` : ""}`);
        // A field name is the agent's text as much as its value (formats allow fields of their own).
        for (const f of c.fields ?? []) out.push(`  - ${t(f.field)}: ~~${t(show(f.before))}~~ → ${t(show(f.after))}`);
      }
      if (bounded.total > changes.length)
        out.push(
          `- **${bounded.total - changes.length} more changes not shown** (${bounded.total} in all); ${bounded.cut.length > 0 ? `${bounded.cut.length} shown with long values cut; ` : ""}every record is in the frozen bytes`,
        );
      else if (bounded.cut.length > 0) out.push(`- ${bounded.cut.length} of these changes are shown with long values cut`);
      out.push("");
    }
  }

  if (comments.requested.length > 0) {
    const by = wf.reviews.filter((x) => x.revision === h.revision && x.decision === "changes_requested").pop()?.reviewer;
    out.push(`## Changes requested on this revision, by item`, "", `${t(by ?? "The reviewer")} commented:`, "");
    for (const c of comments.requested) out.push(`- ${commentLine(c)}`);
    out.push("");
  }
  out.push(...renderRecords(r, presented));
  if (wf.result?.execution) out.push(...renderExecution(r, wf.result.execution));
  out.push(`## Files (${files.length})`, "");
  for (const f of files) {
    const mark = f.change === "unchanged" ? "" : ` — **${f.change}** since revision ${previous}`;
    out.push(`### ${code(f.path)} (${f.size} bytes, sha256 ${f.sha256.slice(0, 12)}…)${mark}`, "");
    const notWhole = describeNotWhole(f);
    // Said before any of its bytes, so no reader takes a part for the whole.
    if (notWhole !== null) out.push(`> **${notWhole.replace(/:.*/s, "")}**${t(notWhole.slice(notWhole.indexOf(":")))}`, "");
    if (notWhole !== null)
      out.push(`> To read all of it after admission: \`twinlock checkout ${shellQuote(runFile)} ${wf.executor} DIR\`.`, "");
    const tooLarge = describeDiffNotShown(f, h.revision, previous ?? h.revision - 1);
    if (tooLarge !== null) out.push(`> ${t(tooLarge)}`, "");
    if (f.shown === "none") continue;
    if (f.text === null)
      out.push(
        "**Not UTF-8 text** (or it holds NUL bytes): shown decoded, each byte that is not text as �. The executor gets the file as it is.",
        "",
        fence(cleanLines(f.lossy ?? ""), ""),
        "",
      );
    else {
      if (f.diff !== null) out.push(fence(cleanLines(f.diff), "diff"), "");
      out.push(fence(cleanLines(f.text), f.path.endsWith(".md") ? "markdown" : f.path.endsWith(".json") ? "json" : ""), "");
    }
  }
  for (const p of removedFiles) out.push(`### ${code(p)} — **removed** since revision ${previous}`, "");
  const run = shellQuote(runFile);
  out.push("## Decide", "");
  if (notice !== null) out.push(`> **Not the whole plan.** ${t(notice)} ${readWhole}`, "");
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

/**
 * The records of the one model as the reviewer reads them, the same for
 * every format: findings with their evidence and facts, actions with target,
 * risk, rollback, what they address, what verifies them and what they come
 * after, criteria, open unknowns and stops. With `presented` (the model is
 * its part shown), each heading counts all of the kind's records and says
 * how many are shown, and a record shown with values cut says so.
 */
export function renderRecords(r: HandoffModel, presented?: PresentedRecords): string[] {
  const out: string[] = [];
  const t = cleanText;
  const bare = (ref: string, marker: string) => (ref.startsWith(marker) ? ref.slice(marker.length) : ref);
  const refs = (list: string[], marker: string) => list.map((x) => `\`${marker}${t(bare(x, marker))}\``).join(", ");
  const cut = new Set(presented?.notShown?.cut ?? []);
  const mark = (marker: string) => (cut.has(marker) ? " (**not shown whole**: long values cut)" : "");
  const counted = (kind: RecordKind, shown: number) => {
    const total = presented?.totals[kind] ?? shown;
    return total === shown ? `${shown}` : `${total}; the first ${shown} shown`;
  };
  const evidence = new Map(r.evidence.map((e) => [e.id, e]));
  out.push(`## Findings (${counted("findings", r.findings.length)})`, "");
  for (const f of r.findings) {
    const facts = f.facts.map(([k, v]) => `${k}: ${t(v)}`).join(", ");
    out.push(`### \`${MARKERS.finding}${f.id}\` ${t(f.summary)}${facts ? ` (${facts})` : ""}${mark(`${MARKERS.finding}${f.id}`)}`, "");
    for (const ref of f.evidence) {
      const id = bare(ref, MARKERS.evidence);
      const e = evidence.get(id);
      out.push(`- \`${MARKERS.evidence}${t(id)}\`${e ? ` ${t(e.summary)}${otherFields(e)}${mark(`${MARKERS.evidence}${e.id}`)}` : ""}`);
    }
    out.push(...fieldLines(f), "");
  }
  // Evidence no finding cites is still a file the executor reads: shown on its own, fields and all.
  const cited = new Set(r.findings.flatMap((f) => f.evidence.map((x) => bare(x, MARKERS.evidence))));
  const uncitedIds = new Set(presented ? presented.uncitedShown : r.evidence.filter((e) => !cited.has(e.id)).map((e) => e.id));
  const uncited = r.evidence.filter((e) => uncitedIds.has(e.id));
  const moreEvidence = (presented?.totals.evidence ?? r.evidence.length) - r.evidence.length;
  if (uncited.length > 0 || moreEvidence > 0) {
    out.push(
      `### Evidence no finding cites (${uncited.length}${moreEvidence > 0 ? ` of the first ${r.evidence.length} evidence records shown; ${moreEvidence} more not shown` : ""})`,
      "",
    );
    for (const e of uncited)
      out.push(`- \`${MARKERS.evidence}${t(e.id)}\` ${t(e.summary)}${otherFields(e)}${mark(`${MARKERS.evidence}${e.id}`)}`);
    out.push("");
  }
  const addressed = new Set(r.actions.flatMap((a) => a.findings.map((x) => bare(x, MARKERS.finding))));
  const unaddressedIds = presented ? presented.unaddressedShown : r.findings.filter((f) => !addressed.has(f.id)).map((f) => f.id);
  const unaddressed = unaddressedIds.map((id) => `\`${MARKERS.finding}${t(id)}\``);
  const unaddressedTotal = presented?.unaddressed ?? unaddressed.length;
  if (unaddressedTotal > unaddressed.length) unaddressed.push(`and ${unaddressedTotal - unaddressed.length} more not shown`);
  if (unaddressed.length > 0) out.push(`> Not addressed by any action: ${unaddressed.join(", ")}`, "");
  out.push(`## Actions (${counted("actions", r.actions.length)})`, "");
  for (const a of r.actions) {
    out.push(`### \`${MARKERS.action}${a.id}\` ${t(a.summary)}${mark(`${MARKERS.action}${a.id}`)}`, "");
    out.push(`- target: ${a.target === null ? "(not given)" : t(a.target)}`);
    out.push(`- risk: **${a.risk === null ? "(not given)" : t(a.risk)}**`);
    out.push(`- rollback: ${a.rollback === null ? "**none given**" : t(a.rollback)}`);
    out.push(`- addresses: ${refs(a.findings, MARKERS.finding) || "(nothing)"}`);
    out.push(`- verified by: ${refs(a.verifies, MARKERS.criterion) || "**nothing**"}`);
    if (a.dependsOn.length) out.push(`- after: ${refs(a.dependsOn, MARKERS.action)}`);
    out.push(...fieldLines(a), "");
  }
  out.push(`## Acceptance criteria (${counted("criteria", r.criteria.length)})`, "");
  for (const c of r.criteria)
    out.push(
      `- \`${MARKERS.criterion}${c.id}\` ${t(c.statement)}${c.method === null ? "" : ` — method: ${t(c.method)}`}${otherFields(c)}${mark(`${MARKERS.criterion}${c.id}`)}`,
    );
  out.push("");
  const open = r.unknowns.filter((u) => u.status === "open");
  const allUnknowns = presented?.totals.unknowns ?? r.unknowns.length;
  // Every unknown, open or not: a resolved one is a record the executor reads too.
  out.push(
    `## Unknowns (${open.length} open${allUnknowns > r.unknowns.length ? ` of the first ${r.unknowns.length} shown; ${allUnknowns} in all` : ""})`,
    "",
  );
  if (r.unknowns.length === 0) out.push("- none");
  for (const u of r.unknowns)
    out.push(
      `- \`${MARKERS.unknown}${u.id}\` ${t(u.question)} (${u.status}${u.owner ? `, owner: ${t(u.owner)}` : ""})${otherFields(u)}${mark(`${MARKERS.unknown}${u.id}`)}`,
    );
  out.push("");
  if (r.stops.length) {
    out.push(`## Stops (${counted("stops", r.stops.length)})`, "");
    for (const s of r.stops)
      out.push(
        `- \`!STOP:${t(s.reason)}\` ${s.resolved ? "resolved" : "**unresolved**"}${s.notes ? ` — ${t(s.notes)}` : ""}${mark(`!STOP:${s.reason}`)}`,
      );
    out.push("");
  }
  return out;
}

/** The fields of a record its view does not show (see unshownFields), one line each. */
function fieldLines(record: RecordBase): string[] {
  return unshownFields(record).map(([key, value]) => `- ${cleanText(key)}: ${cleanText(value)}`);
}

/** The same, on the record's one line. */
function otherFields(record: RecordBase): string {
  return unshownFieldsAfter(record, cleanText);
}

/**
 * The plan beside what was done (recorded by `close`): each action done or
 * not, each changed file and whether it lay inside the plan, each criterion
 * with its recorded result or none.
 */
export function renderExecution(r: HandoffModel, e: Execution): string[] {
  const t = cleanText;
  const c = e.conformance;
  const out: string[] = ["## Plan versus execution", ""];
  const deviations =
    c.actions_not_done.length + c.files_outside_plan.length + c.criteria_without_evidence.length + c.criteria_failed.length;
  out.push(
    deviations === 0
      ? "The executed change conforms to the approved plan."
      : `**${deviations} deviation${deviations === 1 ? "" : "s"} from the approved plan.**`,
    "",
  );
  out.push("| action | target | done |", "|---|---|---|");
  for (const a of r.actions)
    out.push(
      `| \`${MARKERS.action}${t(a.id)}\` | ${cell(a.target ?? "(not given)")} | ${c.actions_not_done.includes(a.id) ? "**not done**" : "done"} |`,
    );
  out.push("", `Changed files (${e.changed_files.length}):`, "");
  for (const f of e.changed_files)
    out.push(
      `- ${code(f.path)} ${f.sha256 === null ? "deleted" : `sha256 ${f.sha256.slice(7, 19)}…`}${c.files_outside_plan.includes(f.path) ? " — **outside the plan**" : ""}`,
    );
  out.push("", "| criterion | result | command |", "|---|---|---|");
  for (const k of r.criteria) {
    const ev = e.criteria.filter((x) => x.id === k.id);
    if (ev.length === 0) out.push(`| \`${MARKERS.criterion}${t(k.id)}\` | **no evidence** | |`);
    for (const x of ev)
      out.push(`| \`${MARKERS.criterion}${t(k.id)}\` | ${x.result === "passed" ? "passed" : "**failed**"} | ${cell(x.command)} |`);
  }
  out.push("");
  return out;
}

/** Text inside a Markdown table cell: one line, backslashes and then pipes escaped (markdownTableCell). */
const cell = markdownTableCell;

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
