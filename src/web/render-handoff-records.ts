import type { HandoffModel, RecordBase, RecordKind } from "../handoff/handoff-model.js";
import { MARKERS } from "../handoff/handoff-records.js";
import { unshownFields, unshownFieldsAfter } from "../handoff/unshown-fields.js";
import { escapeHtml } from "./escape-html.js";

/** A citation written bare or as its marker, shown as its marker. */
function cite(ref: string, marker: string): string {
  return `<code>${escapeHtml(ref.startsWith(marker) ? ref : `${marker}${ref}`)}</code>`;
}

function cites(refs: readonly string[], marker: string, none: string): string {
  return refs.length === 0 ? none : refs.map((r) => cite(r, marker)).join(", ");
}

/** A `<dt>`/`<dd>` pair; `value` is trusted HTML. */
function fact(label: string, value: string): string {
  return `<dt>${escapeHtml(label)}</dt><dd>${value}</dd>`;
}

/** The fields of a record its view does not show (see unshownFields), as `<dt>`/`<dd>` pairs. */
function otherFacts(record: RecordBase): string {
  return unshownFields(record)
    .map(([key, value]) => fact(key, escapeHtml(value)))
    .join("");
}

/** The same, on the record's one line. */
function otherFields(record: RecordBase): string {
  return unshownFieldsAfter(record, escapeHtml);
}

/**
 * The records of one revision as sections (each with an `<h2>`, records
 * with `<h3>`): evidence; findings with their evidence and facts
 * (confidence, severity…); actions with target, risk, rollback, what they
 * address, what verifies them and what they depend on; criteria; unknowns
 * with their status; stops. A missing fact is said, not left blank. With
 * `part` (the model is the part shown of larger records), each heading
 * counts all of the kind's records and how many are shown, and a record
 * shown with values cut says so.
 */
export function renderHandoffRecords(
  m: HandoffModel,
  part?: { totals: Record<RecordKind, number>; cut: readonly string[] },
  commentForm?: string,
): string {
  const e = escapeHtml;
  const comment = (kind: string, id: string) => (commentForm === undefined ? "" : renderCommentControl(commentForm, kind, id));
  const out: string[] = [];
  const cut = new Set(part?.cut ?? []);
  const mark = (marker: string, id: string) =>
    cut.has(`${marker}${id}`) ? ` <strong class="record-cut">(not shown whole: long values cut)</strong>` : "";
  const counted = (kind: RecordKind, shown: number) => {
    const total = part?.totals[kind] ?? shown;
    return total === shown ? `${shown}` : `${total}; the first ${shown} shown`;
  };
  out.push(
    `<section id="evidence" aria-labelledby="evidence-h"><h2 id="evidence-h">Evidence (${counted("evidence", m.evidence.length)})</h2>`,
  );
  out.push(
    m.evidence.length === 0
      ? "<p>No evidence.</p>"
      : `<ul class="records">\n${m.evidence.map((x) => `<li>${cite(x.id, MARKERS.evidence)} ${e(x.summary)}${otherFields(x)}${mark(MARKERS.evidence, x.id)}${comment("evidence", x.id)}</li>`).join("\n")}\n</ul>`,
  );
  out.push("</section>");

  out.push(
    `<section id="findings" aria-labelledby="findings-h"><h2 id="findings-h">Findings (${counted("findings", m.findings.length)})</h2>`,
  );
  for (const f of m.findings) {
    const facts = f.facts.map(([k, v]) => fact(k, e(v))).join("");
    out.push(
      `<article class="record"><h3>${cite(f.id, MARKERS.finding)} ${e(f.summary)}${mark(MARKERS.finding, f.id)}</h3>\n<dl>${facts}${fact("evidence", cites(f.evidence, MARKERS.evidence, "none cited"))}${otherFacts(f)}</dl>${comment("finding", f.id)}</article>`,
    );
  }
  out.push("</section>");

  out.push(`<section id="actions" aria-labelledby="actions-h"><h2 id="actions-h">Actions (${counted("actions", m.actions.length)})</h2>`);
  for (const a of m.actions) {
    const given = (v: string | null, missing: string) => (v === null ? `<strong>${missing}</strong>` : e(v));
    out.push(
      `<article class="record"><h3>${cite(a.id, MARKERS.action)} ${e(a.summary)}${mark(MARKERS.action, a.id)}</h3>\n<dl>${[
        fact("target", given(a.target, "not given")),
        fact("risk", given(a.risk, "not given")),
        fact("rollback", given(a.rollback, "none given")),
        fact("addresses", cites(a.findings, MARKERS.finding, "nothing")),
        fact("verified by", cites(a.verifies, MARKERS.criterion, "<strong>nothing</strong>")),
        fact("depends on", cites(a.dependsOn, MARKERS.action, "nothing")),
        otherFacts(a),
      ].join("")}</dl>${comment("action", a.id)}</article>`,
    );
  }
  out.push("</section>");

  out.push(
    `<section id="criteria" aria-labelledby="criteria-h"><h2 id="criteria-h">Acceptance criteria (${counted("criteria", m.criteria.length)})</h2>`,
  );
  out.push(
    m.criteria.length === 0
      ? "<p>No criteria.</p>"
      : `<ul class="records">\n${m.criteria
          .map(
            (c) =>
              `<li>${cite(c.id, MARKERS.criterion)} ${e(c.statement)}${c.method === null ? "" : ` — method: ${e(c.method)}`}${otherFields(c)}${mark(MARKERS.criterion, c.id)}${comment("criterion", c.id)}</li>`,
          )
          .join("\n")}\n</ul>`,
  );
  out.push("</section>");

  const open = m.unknowns.filter((u) => u.status === "open").length;
  out.push(
    `<section id="unknowns" aria-labelledby="unknowns-h"><h2 id="unknowns-h">Unknowns (${open} open${(part?.totals.unknowns ?? m.unknowns.length) > m.unknowns.length ? ` of the first ${m.unknowns.length} shown; ${part?.totals.unknowns} in all` : ""})</h2>`,
  );
  out.push(
    m.unknowns.length === 0
      ? "<p>No unknowns.</p>"
      : `<ul class="records">\n${m.unknowns
          .map(
            (u) =>
              `<li class="unknown-${e(u.status)}">${cite(u.id, MARKERS.unknown)} ${e(u.question)} <span class="status">(${e(u.status)}${u.owner === undefined ? "" : `, owner: ${e(u.owner)}`})</span>${otherFields(u)}${mark(MARKERS.unknown, u.id)}</li>`,
          )
          .join("\n")}\n</ul>`,
  );
  out.push("</section>");

  out.push(`<section id="stops" aria-labelledby="stops-h"><h2 id="stops-h">Stops (${counted("stops", m.stops.length)})</h2>`);
  out.push(
    m.stops.length === 0
      ? "<p>No stops in the handoff.</p>"
      : `<ul class="records">\n${m.stops
          .map(
            (s) =>
              `<li><code>!STOP:${e(s.reason)}</code> ${s.resolved ? "resolved" : "<strong>unresolved</strong>"}${s.notes === undefined ? "" : ` — ${e(s.notes)}`}${mark("!STOP:", s.reason)}</li>`,
          )
          .join("\n")}\n</ul>`,
  );
  out.push("</section>");
  return out.join("\n");
}

/**
 * A small "comment" disclosure for one record: a text field that belongs to
 * the request-changes form (`form=`), posted as `comment:ID` and left out
 * when empty. The record's ID is the agent's text, escaped like the rest.
 */
export function renderCommentControl(formId: string, kind: string, id: string): string {
  const e = escapeHtml;
  const field = `comment-${kind}-${id}`;
  return `<details class="comment-control"><summary>Comment on ${e(id)}</summary>
<label for="${e(field)}">Your comment on ${e(kind)} ${e(id)}, sent with “request changes”</label>
<textarea id="${e(field)}" name="comment:${e(id)}" form="${e(formId)}" rows="3" maxlength="4096"></textarea>
</details>`;
}
