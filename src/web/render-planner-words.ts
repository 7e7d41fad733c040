import { cleanLines, cleanText } from "../input/clean-text.js";
import { escapeHtml } from "./escape-html.js";

/** How many characters of the planner's words a one-line label shows before it is cut (the whole text is one click away). */
export const PLANNER_WORDS_LINE = 120;

/**
 * The planner's words (an action's summary, a finding) shown next to a
 * decision control as what they are: one line, marked "planner wrote:" and
 * quoted, escaped, invisible characters written out, cut to
 * PLANNER_WORDS_LINE characters at its first line break or sooner, so
 * agent text can never draw panel-like lines ("Nothing to decide now", a
 * fake approved banner) beside a checkbox or a button.
 */
export function renderPlannerLine(text: string): string {
  const line = cutLine(text);
  const title = line.cut ? ' title="cut to one line; the whole text is under “whole text”"' : "";
  return `<span class="planner-words"${title}><span class="planner-words-by">planner wrote:</span> <q>${escapeHtml(line.shown)}${line.cut ? "…" : ""}</q></span>`;
}

/**
 * The whole of the planner's words when renderPlannerLine cut them, in a
 * disclosure (put it beside the control's label, never inside it: a label
 * holds only its control's name); empty when the line showed them all.
 */
export function renderPlannerWhole(text: string): string {
  if (!cutLine(text).cut) return "";
  return `<details class="planner-words-whole"><summary>whole text the planner wrote</summary><pre class="file-text">${escapeHtml(cleanLines(text))}</pre></details>`;
}

/** The planner's words as one line: to the first line break, at most PLANNER_WORDS_LINE characters, and whether that left any out. */
function cutLine(text: string): { shown: string; cut: boolean } {
  const trimmed = text.trim();
  const firstBreak = trimmed.search(/[\r\n\u2028\u2029\u0085]/);
  const first = firstBreak < 0 ? trimmed : trimmed.slice(0, firstBreak);
  // Cut by code points, never inside a surrogate pair: one more than shown, at two units each at most, says whether any is left out.
  const points = Array.from(first.slice(0, (PLANNER_WORDS_LINE + 1) * 2));
  const shown = cleanText(points.slice(0, PLANNER_WORDS_LINE).join("")).trimEnd();
  return { shown, cut: firstBreak >= 0 || points.length > PLANNER_WORDS_LINE };
}
