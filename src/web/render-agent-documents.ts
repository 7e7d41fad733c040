import { renderExecutorPrompt } from "./render-executor-prompt.js";
import { renderMarkdown } from "./render-markdown.js";

/** The agent-written Markdown a revision page shows: the executor's body and the handoff's report.md (or none). */
export interface AgentDocuments {
  executorBody: string;
  report: string | null;
}

/** The same documents as HTML that can do nothing (renderExecutorPrompt, renderMarkdown), to put in the page as they are. */
export interface RenderedAgentDocuments {
  executor: string;
  report: string | null;
}

/**
 * How much of report.md the page renders as Markdown, in UTF-16 units: a
 * longer report is rendered up to here (at a line's end) and said to be;
 * all of its text is shown under Files, within the budget of what is shown.
 */
export const REPORT_RENDER_LIMIT = 64 * 1024;

/**
 * A revision page's agent-written Markdown rendered, synchronously: about a
 * microsecond a character, so up to a second for the 64 KiB of each the
 * page renders. A server runs it off its thread (renderAgentDocumentsOffThread).
 */
export function renderAgentDocuments(docs: AgentDocuments): RenderedAgentDocuments {
  return {
    executor: `<div class="markdown">${renderExecutorPrompt(docs.executorBody)}</div>`,
    report: docs.report === null ? null : renderReport(docs.report),
  };
}

function renderReport(report: string): string {
  if (report.length <= REPORT_RENDER_LIMIT) return `<div class="markdown">${renderMarkdown(report, 2)}</div>`;
  const lineEnd = report.lastIndexOf("\n", REPORT_RENDER_LIMIT);
  const part = report.slice(0, lineEnd > 0 ? lineEnd + 1 : REPORT_RENDER_LIMIT);
  return `<p class="banner banner-partial" role="note">The report is rendered here only up to its first ${part.length} of ${report.length} characters; the text of all that is shown of it is under Files, below.</p>
<div class="markdown">${renderMarkdown(part, 2)}</div>`;
}
