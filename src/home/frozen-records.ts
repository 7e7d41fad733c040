import { IntegrityError } from "../errors/errors.js";
import type { HandoffFormat } from "../handoff/handoff-format.js";
import type { HandoffModel } from "../handoff/handoff-model.js";
import { sourceOfTexts } from "../handoff/handoff-source.js";
import type { ManifestEntry } from "../handoff/hash-handoff.js";
import { readBlob } from "./frozen-bytes.js";
import type { GateHome } from "./gate-home.js";

/**
 * The records of a frozen revision as the one model, read in the pinned
 * suite's format from the frozen bytes in the gate home (never from anything
 * the run file copied): what the reviewer is shown and what admission scopes
 * actions by. Bytes that do not read in that format are an IntegrityError.
 */
export function readFrozenModel(home: GateHome, files: readonly ManifestEntry[], format: HandoffFormat): HandoffModel {
  const texts = new Map<string, Buffer>();
  // Only the format's record files and the Markdown files are read: the model comes from nothing else.
  for (const f of files) if (format.recordFiles.includes(f.path) || f.path.endsWith(".md")) texts.set(f.path, readBlob(home, f));
  const source = sourceOfTexts(texts);
  const all = { files: files.map((f) => f.path).sort(), read: source.read };
  const { model, problems } = format.read(all);
  const first = problems[0];
  if (first)
    throw new IntegrityError(
      `the frozen handoff does not read as the ${format.name} format (${first.file}${first.record ? ` [${first.record}]` : ""}: ${first.message}); it was frozen under another format, or the frozen bytes are damaged`,
      { code: "FROZEN_DAMAGED" },
    );
  return model;
}

/** The +ACTION IDs of a frozen plan; none when its bytes cannot be read in the format (admission then fails on the frozen-bytes or scope check). */
export function frozenActionIds(home: GateHome, files: readonly ManifestEntry[], format: HandoffFormat): string[] {
  try {
    return readFrozenModel(home, files, format).actions.map((a) => a.id);
  } catch {
    return [];
  }
}
