import type { RecordChange } from "../handoff/diff-records.js";
import { escapeHtml } from "./escape-html.js";

/** A field value of a record as one line: null as "(none)", text as it is, anything else as JSON. */
function show(value: unknown): string {
  if (value === null || value === undefined) return "(none)";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The record changes since the previous revision, by ID: each added,
 * removed or changed record named by its marker (the change said in words,
 * not only by colour) and, for a changed one, each field's old value as
 * `<del>` and new value as `<ins>`, labelled for screen readers; when
 * `total` counts more than are shown, how many more there are.
 */
export function renderRecordChanges(changes: readonly RecordChange[], total = changes.length): string {
  if (changes.length === 0) return `<p>Nothing in the records changed.</p>`;
  const items = changes.map((c) => {
    const fields = (c.fields ?? []).map(
      (f) =>
        `<li><span class="field">${escapeHtml(f.field)}</span>: <del><span class="visually-hidden">was: </span>${escapeHtml(show(f.before))}</del> → <ins><span class="visually-hidden">now: </span>${escapeHtml(show(f.after))}</ins></li>`,
    );
    const summary = c.summary ? ` — ${escapeHtml(c.summary)}` : "";
    return `<li class="change change-${escapeHtml(c.change)}"><span class="change-kind">${escapeHtml(c.change)}</span> <code>${escapeHtml(c.marker)}</code>${summary}${fields.length ? `\n<ul class="fields">${fields.join("\n")}</ul>` : ""}</li>`;
  });
  const more =
    total > changes.length
      ? `\n<p class="banner banner-partial" role="note">${total - changes.length} more changes not shown (${total} in all); every record is in the frozen bytes.</p>`
      : "";
  return `<ul class="changes">\n${items.join("\n")}\n</ul>${more}`;
}
