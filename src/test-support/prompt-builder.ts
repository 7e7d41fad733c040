/**
 * Builders for prompt files in tests: canonical pair members (SPEC §2) with
 * every required body block, and unpaired prompts. Written independently of
 * `scaffold-pair.ts` so the tests do not trust the code they check.
 *
 * Frontmatter is rendered one top-level key per line, in insertion order, so
 * a test can find the line of any key with `lineOf`.
 */

/** A frontmatter value printed verbatim (for block mappings, odd YAML, broken YAML). */
export class RawYaml {
  constructor(readonly text: string) {}
}

/** Print `text` as-is as the value of a key. */
export const raw = (text: string) => new RawYaml(text);

/** Frontmatter as an ordered object; a value of `undefined` removes the key. */
export type Frontmatter = Record<string, unknown>;

const RESERVED = /^(true|false|null|yes|no|on|off|y|n|~)$/i;

function yamlValue(value: unknown): string {
  if (value instanceof RawYaml) return value.text;
  if (value === null) return "null";
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  if (typeof value === "string") {
    const plain = /^[A-Za-z_][A-Za-z0-9 _./-]*$/.test(value) && !RESERVED.test(value) && !value.endsWith(" ");
    return plain ? value : JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(yamlValue).join(", ")}]`;
  if (typeof value === "object") {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${yamlValue(v)}`)
      .join(", ")}}`;
  }
  throw new Error(`cannot render ${typeof value} as YAML`);
}

/** Merge overrides over a base, keeping base order; `undefined` deletes; new keys go last. */
export function mergeFrontmatter(base: Frontmatter, overrides: Frontmatter = {}): Frontmatter {
  const out: Frontmatter = {};
  for (const [k, v] of Object.entries(base)) {
    const value = k in overrides ? overrides[k] : v;
    if (value !== undefined) out[k] = value;
  }
  for (const [k, v] of Object.entries(overrides)) if (!(k in base) && v !== undefined) out[k] = v;
  return out;
}

/** A prompt file: `---`, one line per key, `---`, the body. */
export function renderPrompt(frontmatter: Frontmatter, body: string): string {
  const lines = ["---"];
  for (const [k, v] of Object.entries(frontmatter)) if (v !== undefined) lines.push(`${k}: ${yamlValue(v)}`);
  lines.push("---", "", body.replace(/^\n+/, ""));
  return lines.join("\n");
}

/** 1-based line of the first line of `text` that starts with `prefix` (e.g. `"exact_twin_only:"`). Throws when absent. */
export function lineOf(text: string, prefix: string): number {
  const i = text.split("\n").findIndex((l) => l.startsWith(prefix));
  if (i === -1) throw new Error(`no line starts with ${JSON.stringify(prefix)}`);
  return i + 1;
}

/** 1-based line of the first line containing `needle`. Throws when absent. */
export function lineContaining(text: string, needle: string): number {
  const i = text.split("\n").findIndex((l) => l.includes(needle));
  if (i === -1) throw new Error(`no line contains ${JSON.stringify(needle)}`);
  return i + 1;
}

/** 1-based column of `needle` on line `line` of `text`. */
export function colOf(text: string, line: number, needle: string): number {
  const l = text.split("\n")[line - 1] ?? "";
  const i = l.indexOf(needle);
  if (i === -1) throw new Error(`line ${line} does not contain ${JSON.stringify(needle)}`);
  return i + 1;
}

/** SPEC §2's six runtime markers. */
export const MARKERS = ["@EVIDENCE:{id}", "?UNKNOWN:{id}", "#FINDING:{id}", "+ACTION:{id}", "=VERIFY:{id}", "!STOP:{reason}"] as const;

/** The canonical frontmatter of a paired planner (SPEC §2), plus ordinary descriptive keys. */
export function plannerFrontmatter(plannerId: string, executorId: string, overrides: Frontmatter = {}): Frontmatter {
  return mergeFrontmatter(
    {
      prompt_id: plannerId,
      title: `Planner ${plannerId}`,
      prompt_role: "investigative",
      category: "testing",
      risk_level: "medium",
      description: "Investigates and plans; changes nothing.",
      pairing_required: true,
      paired_prompt_id: executorId,
      plan_review_required: true,
      execution_consent_required: true,
      exact_twin_only: true,
      review_cycle: "review_revise_refreeze_rereview_then_consent",
      requires: ["MD-01"],
      related_prompts: [],
      default_mode: "PLAN_ONLY",
      allowed_modes: ["AUDIT_ONLY", "PLAN_ONLY"],
    },
    overrides,
  );
}

/** The canonical frontmatter of a paired executor (SPEC §2), requiring its planner. */
export function executorFrontmatter(executorId: string, plannerId: string, overrides: Frontmatter = {}): Frontmatter {
  return mergeFrontmatter(
    {
      prompt_id: executorId,
      title: `Executor ${executorId}`,
      prompt_role: "executive",
      category: "testing",
      risk_level: "medium",
      description: "Carries out the approved plan and nothing else.",
      pairing_required: true,
      paired_prompt_id: plannerId,
      accepted_planning_prompt_id: plannerId,
      reviewed_handoff_required: true,
      execution_consent_required: true,
      exact_twin_only: true,
      requires: [plannerId, "MD-01"],
      related_prompts: [],
      default_mode: "DRAFT_ONLY",
      allowed_modes: ["DRAFT_ONLY", "APPLY_SAFE", "APPLY_APPROVED", "VERIFY_ONLY"],
    },
    overrides,
  );
}

/** Frontmatter of a prompt outside any pair. */
export function unpairedFrontmatter(id: string, role: string, overrides: Frontmatter = {}): Frontmatter {
  return mergeFrontmatter(
    {
      prompt_id: id,
      title: `Unpaired ${role} ${id}`,
      prompt_role: role,
      category: role,
      risk_level: "low",
      pairing_required: false,
      paired_prompt_id: null,
      requires: id === "MD-01" ? [] : ["MD-01"],
      related_prompts: [],
      default_mode: "AUDIT_ONLY",
      allowed_modes: ["AUDIT_ONLY"],
    },
    overrides,
  );
}

export interface BodyOptions {
  /** Block tags to leave out. */
  omit?: readonly string[];
  /** Replace a block's inner text, by tag. */
  blocks?: Readonly<Record<string, string>>;
  /** Markers named in <runtime_markers> (default: all six). */
  markers?: readonly string[];
  /** Free text appended after the blocks. */
  extra?: string;
}

/** The planner's default verification design: list items an executor must not copy. */
export const DEFAULT_VERIFICATION_ITEMS = [
  "The regression test fails before the change and passes after it.",
  "Error rate stays under the agreed threshold for one full hour.",
] as const;

function renderBlocks(title: string, blocks: Array<[string, string]>, options: BodyOptions): string {
  const omit = new Set(options.omit ?? []);
  const parts = [`# ${title}`, ""];
  for (const [tag, inner] of blocks) {
    if (omit.has(tag)) continue;
    parts.push(`<${tag}>`, (options.blocks?.[tag] ?? inner).replace(/^\n+|\n+$/g, ""), `</${tag}>`, "");
  }
  if (options.extra) parts.push(options.extra, "");
  return parts.join("\n");
}

function markerBlock(options: BodyOptions): string {
  return (options.markers ?? MARKERS).map((m) => `- \`${m}\` is used as the contract says.`).join("\n");
}

const COMMON = (options: BodyOptions): Array<[string, string]> => [
  ["runtime_markers", markerBlock(options)],
  ["authorization_boundary", "Only what the consented mode allows; nothing outside the action scope."],
  ["tool_policy", "Read tools only unless an approved action needs more."],
];

/** The gate text naming `executorId` and every required phrase. */
export function gateText(executorId: string): string {
  return [
    "Freeze the handoff and present it for user review.",
    "Record requested changes as feedback, never as approval; revise, re-verify and re-freeze under a new hash.",
    `After approval, ask one execution consent question naming the exact execution twin ${executorId}.`,
  ].join("\n");
}

/** A planner body with every block SPEC §2 requires of a paired planner. */
export function plannerBody(executorId: string, options: BodyOptions = {}): string {
  return renderBlocks(
    "Planner",
    [
      ...COMMON(options),
      ["handoff_contract", "Write the four records; every finding cites evidence."],
      ["verification_design", DEFAULT_VERIFICATION_ITEMS.map((i) => `- ${i}`).join("\n")],
      ["plan_review_and_execution_gate", gateText(executorId)],
    ],
    options,
  );
}

/** An executor body with every block SPEC §2 requires of a paired executor. */
export function executorBody(plannerId: string, options: BodyOptions = {}): string {
  return renderBlocks(
    "Executor",
    [
      ...COMMON(options),
      ["reviewed_handoff_authority", `Act only on the reviewed, approved and consented handoff of ${plannerId}.`],
      ["decision_rules", "Follow the plan's order; on any surprise, stop."],
      ["verification_reference", "Run each criterion of the frozen acceptance_criteria.json by its ID."],
    ],
    options,
  );
}

/** A body for a prompt outside any pair. */
export function unpairedBody(options: BodyOptions = {}): string {
  return renderBlocks("Unpaired prompt", COMMON(options), options);
}

/** Options for one whole prompt file. */
export interface PromptOptions {
  frontmatter?: Frontmatter;
  body?: BodyOptions;
}

/** A whole paired-planner file. */
export function plannerText(plannerId: string, executorId: string, options: PromptOptions = {}): string {
  return renderPrompt(plannerFrontmatter(plannerId, executorId, options.frontmatter), plannerBody(executorId, options.body));
}

/** A whole paired-executor file. */
export function executorText(executorId: string, plannerId: string, options: PromptOptions = {}): string {
  return renderPrompt(executorFrontmatter(executorId, plannerId, options.frontmatter), executorBody(plannerId, options.body));
}

/** A whole unpaired-prompt file. */
export function unpairedText(id: string, role: string, options: PromptOptions = {}): string {
  return renderPrompt(unpairedFrontmatter(id, role, options.frontmatter), unpairedBody(options.body));
}

/** File paths of the base fixture suite, by prompt ID. */
export const BASE_FILES = {
  "MD-01": "control/md-01-contract.md",
  "MD-10": "pairs/md-10-planner.md",
  "MD-11": "pairs/md-11-executor.md",
  "MD-12": "pairs/md-12-planner.md",
  "MD-13": "pairs/md-13-executor.md",
  "MD-20": "ops/md-20-hotfix.md",
} as const;

/**
 * A small valid suite: control MD-01, pairs MD-10→MD-11 and MD-12→MD-13,
 * an unpaired executive MD-20 (like MD-26 of the source), and a config
 * declaring 2 pairs. Spread it and replace files to plant defects.
 */
export function baseSuite(): Record<string, string> {
  return {
    [BASE_FILES["MD-01"]]: unpairedText("MD-01", "control"),
    [BASE_FILES["MD-10"]]: plannerText("MD-10", "MD-11"),
    [BASE_FILES["MD-11"]]: executorText("MD-11", "MD-10"),
    [BASE_FILES["MD-12"]]: plannerText("MD-12", "MD-13"),
    [BASE_FILES["MD-13"]]: executorText("MD-13", "MD-12"),
    [BASE_FILES["MD-20"]]: unpairedText("MD-20", "executive", { frontmatter: { category: "testing" } }),
    "twinlock.yaml": "suite_id: fixture\ndeclared_pairs: 2\n",
  };
}
