import type { StopRecord, UnknownRecord, UnknownStatus } from "./handoff-model.js";
import { MARKERS, STOP_REASON_PATTERN } from "./handoff-records.js";

/** Marker IDs that name the marker itself in prose (e.g. `+ACTION:{id}`, `+ACTION:ID`), not a record. */
const PLACEHOLDER_IDS = new Set(["id", "ID"]);

/** A marker such as `+ACTION:A3` written in a Markdown file: the record kind's marker and the ID. */
export interface MarkerCitation {
  marker: string;
  id: string;
}

const CITATION_MARKERS = [MARKERS.evidence, MARKERS.unknown, MARKERS.finding, MARKERS.action, MARKERS.criterion];

/**
 * Every record marker cited in a Markdown text, once each (placeholders such
 * as `+ACTION:{id}` or `+ACTION:ID` left out; a dot closing a sentence right
 * after a marker is punctuation, not part of the ID).
 */
export function markdownCitations(text: string): MarkerCitation[] {
  const out = new Map<string, MarkerCitation>();
  for (const marker of CITATION_MARKERS) {
    const pattern = new RegExp(`${escapeMarker(marker)}([A-Za-z0-9][A-Za-z0-9._-]*)`, "g");
    for (const m of text.matchAll(pattern)) {
      const id = (m[1] as string).replace(/[.]+$/, "");
      if (!PLACEHOLDER_IDS.has(id)) out.set(`${marker}${id}`, { marker, id });
    }
  }
  return [...out.values()];
}

/**
 * A line that *declares* an unknown or a stop: the marker first on the line
 * (after an optional list bullet), then an optional status in parentheses,
 * then the question or notes:
 *
 *     - ?UNKNOWN:U1 (open) Does the batch job take the same lock? owner: dba
 *     - !STOP:missing-backup (resolved) snapshot taken at 10:02
 *
 * An unknown without a status is open; a stop without `(resolved)` is unresolved.
 */
const DECLARATION =
  /^[ \t]*(?:[-*+][ \t]+|[0-9]+[.)][ \t]+)?(\?UNKNOWN:|!STOP:)([A-Za-z0-9][A-Za-z0-9._-]*)[ \t]*(?:\(([A-Za-z]+)\))?[ \t]*(.*)$/gm;

/** What the Markdown files of a handoff declare, and the declarations that do not parse. */
export interface MarkdownDeclarations {
  unknowns: UnknownRecord[];
  stops: StopRecord[];
  problems: Array<{ file: string; record?: string; message: string }>;
}

/** Read the `?UNKNOWN:` and `!STOP:` declarations of Markdown texts (file → text), in file order. */
export function markdownDeclarations(texts: ReadonlyArray<[string, string]>): MarkdownDeclarations {
  const out: MarkdownDeclarations = { unknowns: [], stops: [], problems: [] };
  for (const [file, text] of texts) {
    for (const m of text.matchAll(DECLARATION)) {
      const [line, marker, rawId, status, rest] = m as unknown as [string, string, string, string | undefined, string];
      const id = rawId.replace(/[.]+$/, "");
      if (PLACEHOLDER_IDS.has(id)) continue;
      const notes = rest.trim();
      // A status word in another case (`(Resolved)`) is named as such: it reads like the right word to a person.
      const statuses = marker === MARKERS.unknown ? ["open", "resolved", "deferred"] : ["open", "resolved"];
      const caseHint =
        status !== undefined && status !== status.toLowerCase() && statuses.includes(status.toLowerCase())
          ? `; status words are lower case: (${status.toLowerCase()})`
          : "";
      if (marker === MARKERS.unknown) {
        if (status !== undefined && !["open", "resolved", "deferred"].includes(status)) {
          out.problems.push({
            file,
            record: id,
            message: `?UNKNOWN:${id} has status (${status}); write (open), (resolved) or (deferred)${caseHint}`,
          });
        }
        const question = notes === "" ? "(no question written)" : notes;
        // A status it cannot read counts as open (listed for the reviewer); the problem above blocks the freeze anyway.
        const known = status === "resolved" || status === "deferred" ? status : "open";
        out.unknowns.push({ id, file, question, status: known as UnknownStatus, source: line.trim() });
      } else {
        if (!STOP_REASON_PATTERN.test(id)) {
          out.problems.push({ file, message: `!STOP:${id} is not a stop reason; write a lower-case slug such as !STOP:missing-backup` });
          continue;
        }
        if (status !== undefined && status !== "resolved" && status !== "open") {
          out.problems.push({
            file,
            message: `!STOP:${id} has status (${status}); write (resolved) once it is, or nothing while it stands${caseHint}`,
          });
          continue;
        }
        out.stops.push({ reason: id, resolved: status === "resolved", file, ...(notes ? { notes } : {}) });
      }
    }
  }
  return out;
}

function escapeMarker(marker: string): string {
  return marker.replace(/[?+=#@!]/g, (c) => `\\${c}`);
}
