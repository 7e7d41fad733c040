/** The roles SPEC §2 knows. */
export const PROMPT_ROLES = ["investigative", "executive", "operational", "gate", "control"] as const;
export type PromptRole = (typeof PROMPT_ROLES)[number];

/** The operating modes SPEC §2 knows. */
export const MODES = ["AUDIT_ONLY", "PLAN_ONLY", "DRAFT_ONLY", "APPLY_SAFE", "APPLY_APPROVED", "VERIFY_ONLY"] as const;
export type Mode = (typeof MODES)[number];

/** `^[A-Z][A-Z0-9]*-[0-9]+$`, e.g. `MD-29`. */
export const PROMPT_ID_PATTERN = /^[A-Z][A-Z0-9]*-[0-9]+$/;

/** A 1-based position in a file. */
export interface Position {
  line: number;
  col: number;
}

/**
 * One prompt file as twinlock reads it. `frontmatter` keeps every key, known
 * or not, exactly as parsed; the typed fields are read from it leniently
 * (a wrong type becomes a diagnostic and the field reads as absent).
 */
export interface Prompt {
  /** POSIX path relative to the suite root. */
  file: string;
  id: string;
  title: string | undefined;
  role: PromptRole | undefined;
  category: string | undefined;
  riskLevel: string | undefined;
  description: string | undefined;
  pairingRequired: boolean;
  pairedPromptId: string | null;
  requires: string[];
  relatedPrompts: string[];
  defaultMode: Mode | undefined;
  allowedModes: Mode[];
  frontmatter: Record<string, unknown>;
  /** Position of each top-level key (`key`), its value (`key=`) and list items (`key[i]`); computed when first asked. */
  positions: PositionIndex;
  body: string;
  /** Line in the file where the body starts. */
  bodyLine: number;
  /** The whole file as read for this parse, decoded from UTF-8 (a byte-order mark kept): the text a page shows. */
  source: string;
  /**
   * `sha256:<hex>` of the file's bytes as read for this parse (worked out on
   * first use). Pins, consents and admission bind this, never a second read:
   * the rules judged and the bytes bound are one read of the file.
   */
  readonly sha256: string;
}

/** Positions by key; only a report of a problem needs one, so a prompt may work them out on first use. */
export interface PositionIndex {
  get(key: string): Position | undefined;
}

/** Where a key sits in the prompt's file, or the file's start when the key is absent. */
export function positionOf(prompt: Prompt, key: string): Position {
  return prompt.positions.get(key) ?? { line: 1, col: 1 };
}
