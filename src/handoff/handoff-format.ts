import type { HandoffFormatName } from "../suite/suite-config.js";
import type { HandoffModel, ReadinessProblem } from "./handoff-model.js";
import type { HandoffSource } from "./handoff-source.js";

/**
 * One handoff record format: an adapter that reads a handoff's files into
 * the one model, with every problem it met, located by file and record.
 * Everything after it (readiness's checks, `present`, the record diff,
 * admission's action scope) reads only the model.
 */
export interface HandoffFormat {
  name: HandoffFormatName;
  /** The files read as records (every other file is shown and diffed as a file). */
  recordFiles: readonly string[];
  /** True when `?UNKNOWN:` and `!STOP:` lines of the Markdown files declare unknowns and stops. */
  markdownDeclares: boolean;
  read(source: HandoffSource): { model: HandoffModel; problems: ReadinessProblem[] };
}
