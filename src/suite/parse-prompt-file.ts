import { isAscii, isUtf8 } from "node:buffer";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { findDeceptiveChar, isPlainAscii } from "../input/clean-text.js";
import { editDistance } from "../input/closest-choice.js";
import { EXECUTOR_CANONICAL, PLANNER_CANONICAL } from "../twin/canonical-metadata.js";
import { loadYaml } from "./load-yaml.js";
import { type ParseCache, parseCacheKey } from "./parse-cache.js";
import { parseSimpleFrontmatter, type SimpleFrontmatter } from "./parse-simple-frontmatter.js";
import {
  MODES,
  type Mode,
  type Position,
  type PositionIndex,
  PROMPT_ID_PATTERN,
  PROMPT_ROLES,
  type Prompt,
  type PromptRole,
} from "./prompt.js";
import { splitFrontmatter } from "./split-frontmatter.js";
import { invalidYaml, yamlErrorMessage } from "./yaml-error-message.js";
import { findYamlTrap } from "./yaml-traps.js";

/** Largest prompt file read; a larger one is reported, not parsed. */
export const MAX_PROMPT_BYTES = 1024 * 1024;

export interface ParsedPromptFile {
  prompt: Prompt | undefined;
  diagnostics: Diagnostic[];
}

/**
 * Parse one prompt file's bytes. Never throws on bad input: every problem
 * becomes a located diagnostic, and `prompt` is undefined when the file
 * cannot yield a prompt with an ID. With a `cache`, frontmatter parsed
 * before from the same bytes is taken from it, and new parses are added.
 */
export function parsePromptFile(file: string, bytes: Uint8Array, cache?: ParseCache): ParsedPromptFile {
  const diagnostics: Diagnostic[] = [];
  const at = (code: Diagnostic["code"], pos: Position, message: string, extra: Partial<Diagnostic> = {}) =>
    diagnostics.push({ code, severity: "error", file, line: pos.line, col: pos.col, message, ...extra });

  const nul = bytes.indexOf(0);
  if (nul !== -1) {
    at("FILE_NUL_BYTE", positionAtByte(bytes, nul), "the file contains a NUL byte; prompt files must be UTF-8 text");
    return { prompt: undefined, diagnostics };
  }
  // Checked by simdutf, then decoded without checking again: several times faster than a fatal TextDecoder on a large suite.
  if (!isUtf8(bytes)) {
    at("FILE_NOT_UTF8", positionAtByte(bytes, firstInvalidUtf8(bytes)), "the file is not valid UTF-8; save it as UTF-8");
    return { prompt: undefined, diagnostics };
  }
  const source = decodeText(bytes);
  let text = source;
  // A byte-order mark is skipped (two, as decoding with TextDecoder and then stripping one always did).
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  if (text.startsWith("\uFEFF")) text = text.slice(1);

  const split = splitFrontmatter(text);
  if (split === "missing") {
    at("FRONTMATTER_MISSING", { line: 1, col: 1 }, "no YAML frontmatter: the file must start with a line `---`");
    return { prompt: undefined, diagnostics };
  }
  if (split === "unclosed") {
    at("FRONTMATTER_UNCLOSED", { line: 1, col: 1 }, "the frontmatter opened on line 1 is never closed by a line `---`");
    return { prompt: undefined, diagnostics };
  }
  const { yamlText, lineCount, body, bodyLine } = split;
  // A lone CR, control or bidi character can make a terminal (or another YAML parser) show a key twinlock does not read.
  // Most frontmatter is printable ASCII, where only a CR can be one (and only an escape can spell a key that is not
  // plain ASCII, below): one look answers both.
  const plainYaml = isPlainAscii(yamlText);
  const hidden = plainYaml && !yamlText.includes("\r") ? undefined : findDeceptiveChar(yamlText);
  if (hidden) {
    at(
      "FRONTMATTER_YAML",
      { line: hidden.line + 1, col: hidden.col },
      `the frontmatter holds ${hidden.codePoint}, a control or direction character that makes text read differently on a terminal and to other YAML parsers; remove it`,
    );
    return { prompt: undefined, diagnostics };
  }
  // Positions are worked out only if a problem is reported: most prompts have none.
  const key = cache ? parseCacheKey(bytes) : undefined;
  const cached = key === undefined ? undefined : cache?.get(key);
  // The text was looked at just above and holds nothing deceptive: the fast parser need not look again.
  const simple = cached === undefined ? parseSimpleFrontmatter(yamlText, 2, { positions: false, checkedText: true }) : undefined;
  // The full parser's duplicate-key check grows with the square of the keys: frontmatter far past any real prompt's is refused first.
  if (cached === undefined && !simple && lineCount > MAX_FRONTMATTER_LINES) {
    at(
      "FRONTMATTER_YAML",
      { line: 2, col: 1 },
      `the frontmatter has ${lineCount} lines, over the ${MAX_FRONTMATTER_LINES}-line limit; keep data out of prompt frontmatter`,
    );
    return { prompt: undefined, diagnostics };
  }
  const parsed: { data: Record<string, unknown>; positions: PositionIndex } | { diagnostics: Diagnostic[] } =
    cached !== undefined
      ? { data: cached, positions: lazyPositions(text, file) }
      : simple
        ? { data: simple.data, positions: lazyPositions(text, file) }
        : parseWithYaml(yamlText, file);
  if (key !== undefined && cached === undefined && !("diagnostics" in parsed)) cache?.set(key, parsed.data, bytes.length);
  if ("diagnostics" in parsed) {
    diagnostics.push(...parsed.diagnostics);
    return { prompt: undefined, diagnostics };
  }
  const { data: frontmatter, positions } = parsed;
  // Keys are plain ASCII names: a key with an invisible or look-alike letter (`аllowed_modes` in Cyrillic) reads as
  // a rule to a person and as an unknown key to twinlock.
  // The fast parser reads only plain ASCII keys; otherwise a key can be odd only if the text has a non-ASCII byte or an escape.
  const oddKey =
    simple === undefined && (!plainYaml || yamlText.includes("\\"))
      ? firstKeyWhere(frontmatter, (k) => /[^\u0020-\u007e]/.test(k))
      : undefined;
  if (oddKey !== undefined) {
    at(
      "FRONTMATTER_YAML",
      positions.get(oddKey.split(".")[0] as string) ?? { line: 2, col: 1 },
      `the frontmatter key ${JSON.stringify(oddKey)} is not a plain ASCII name (letters, digits, _ . -); rename it`,
    );
    return { prompt: undefined, diagnostics };
  }
  const where = (key: string) => positions.get(key) ?? { line: 2, col: 1 };
  // A misspelt rule (`dry_run_requried: true`) is an unknown key, silently ignored: the rule the author meant would not hold.
  for (const key of Object.keys(frontmatter)) {
    const meant = misspeltRule(key, frontmatter[key]);
    if (meant !== undefined)
      at(
        "FIELD_MISSPELT",
        where(key),
        `\`${key}\` is not a key twinlock reads, and twinlock reads \`${meant}\`; a misspelt rule is ignored, so spell it \`${meant}\``,
        { field: key },
      );
  }
  const typeProblem = (key: string, expected: string) =>
    at("FIELD_TYPE", where(key), `\`${key}\` must be ${expected}, found ${describe(frontmatter[key])}`, { field: key });

  // The executor model reads the body, and consent binds its bytes: text in it that a person cannot see is refused too.
  const hiddenInBody = findDeceptiveChar(body);
  if (hiddenInBody)
    at(
      "BODY_HIDDEN_TEXT",
      { line: bodyLine + hiddenInBody.line - 1, col: hiddenInBody.col },
      `the body holds ${hiddenInBody.codePoint}, a control, invisible or direction character a person reading the prompt cannot see; remove it`,
    );

  const rawId = frontmatter.prompt_id;
  if (rawId === undefined || rawId === null) {
    at("PROMPT_ID_MISSING", { line: 2, col: 1 }, "no `prompt_id`: every prompt needs a stable ID such as `MD-29`", {
      field: "prompt_id",
    });
    return { prompt: undefined, diagnostics };
  }
  if (typeof rawId !== "string" || !PROMPT_ID_PATTERN.test(rawId)) {
    at(
      "PROMPT_ID_FORMAT",
      where("prompt_id"),
      `\`prompt_id\` ${JSON.stringify(rawId)} does not match ^[A-Z][A-Z0-9]*-[0-9]+$ (e.g. MD-29)`,
      { field: "prompt_id" },
    );
    return { prompt: undefined, diagnostics };
  }
  const id = rawId;
  const withId = (d: Diagnostic) => ({ ...d, promptId: id });

  const str = (key: string): string | undefined => {
    const v = frontmatter[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") {
      typeProblem(key, "a string");
      return undefined;
    }
    return v;
  };
  const idList = (key: string): string[] => {
    const v = frontmatter[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
      typeProblem(key, "a list of prompt IDs");
      return [];
    }
    return v as string[];
  };

  const roleText = str("prompt_role");
  let role: PromptRole | undefined;
  if (roleText !== undefined) {
    if ((PROMPT_ROLES as readonly string[]).includes(roleText)) role = roleText as PromptRole;
    else
      at("FIELD_VALUE", where("prompt_role"), `\`prompt_role\` ${JSON.stringify(roleText)} is not one of ${PROMPT_ROLES.join(", ")}`, {
        field: "prompt_role",
      });
  }

  const dryRunRequired = frontmatter.dry_run_required;
  if (dryRunRequired !== undefined && dryRunRequired !== null && typeof dryRunRequired !== "boolean")
    typeProblem("dry_run_required", "true or false");

  let pairingRequired = false;
  const pr = frontmatter.pairing_required;
  if (pr !== undefined && pr !== null) {
    if (typeof pr === "boolean") pairingRequired = pr;
    else typeProblem("pairing_required", "true or false");
  }

  let pairedPromptId: string | null = null;
  const pp = frontmatter.paired_prompt_id;
  if (pp !== undefined && pp !== null) {
    if (typeof pp === "string") pairedPromptId = pp;
    else typeProblem("paired_prompt_id", "a prompt ID or null");
  }

  const modeOf = (value: unknown, key: string): Mode | undefined => {
    if (typeof value === "string" && (MODES as readonly string[]).includes(value)) return value as Mode;
    at("FIELD_VALUE", where(key), `\`${key}\` ${JSON.stringify(value)} is not a mode (${MODES.join(", ")})`, { field: key });
    return undefined;
  };
  const dm = frontmatter.default_mode;
  const defaultMode = dm === undefined || dm === null ? undefined : modeOf(dm, "default_mode");
  const am = frontmatter.allowed_modes;
  let allowedModes: Mode[] = [];
  if (am !== undefined && am !== null) {
    if (!Array.isArray(am)) typeProblem("allowed_modes", "a list of modes");
    else allowedModes = am.map((m) => modeOf(m, "allowed_modes")).filter((m): m is Mode => m !== undefined);
  }

  let digest: string | undefined;
  const prompt: Prompt = {
    file,
    id,
    title: str("title"),
    role,
    category: str("category"),
    riskLevel: str("risk_level"),
    description: str("description"),
    pairingRequired,
    pairedPromptId,
    requires: idList("requires"),
    relatedPrompts: idList("related_prompts"),
    defaultMode,
    allowedModes,
    frontmatter,
    positions,
    body,
    bodyLine,
    source,
    // Valid UTF-8 (checked above) decodes and encodes back to the same bytes: the digest is of the bytes parsed.
    get sha256() {
      digest ??= `sha256:${key ?? parseCacheKey(Buffer.from(source, "utf8"))}`;
      return digest;
    },
  };
  return { prompt, diagnostics: diagnostics.map(withId) };
}

/**
 * The text of valid UTF-8 `bytes`. Most prompt files are ASCII, which latin1
 * decodes to the same text in about half the time (a native look says which).
 */
function decodeText(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return buffer.toString(isAscii(buffer) ? "latin1" : "utf8");
}

/** The positions of a prompt the fast parser read, worked out from its text on first use. */
function lazyPositions(text: string, file: string): PositionIndex {
  let positions: Map<string, Position> | undefined;
  return {
    get(key) {
      if (!positions) {
        const split = splitFrontmatter(text);
        if (typeof split !== "object") positions = new Map();
        else {
          const full = parseSimpleFrontmatter(split.yamlText, 2) ?? parseWithYaml(split.yamlText, file);
          positions = "positions" in full ? full.positions : new Map();
        }
      }
      return positions.get(key);
    },
  };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** Byte offset of the first byte that does not start or continue a valid UTF-8 sequence. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  const strict = new TextDecoder("utf-8", { fatal: true });
  // Grow a valid prefix by whole sequences: the first prefix that fails to decode ends at the bad byte.
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    const len = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
    if (len === 0 || i + len > bytes.length) return i;
    try {
      strict.decode(bytes.subarray(i, i + len));
    } catch {
      return i;
    }
    i += len;
  }
  return 0;
}

function positionAtByte(bytes: Uint8Array, index: number): Position {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < index; i++) {
    if (bytes[i] === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, col: index - lineStart + 1 };
}

/** Most frontmatter lines read by the full YAML parser. */
export const MAX_FRONTMATTER_LINES = 5000;

/** The first key, anywhere in the frontmatter (as a dotted path), that `test` picks; or undefined. */
function firstKeyWhere(value: unknown, test: (key: string) => boolean, prefix = ""): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = firstKeyWhere(item, test, prefix);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, child] of Object.entries(value)) {
    const keyPath = prefix === "" ? key : `${prefix}.${key}`;
    if (test(key)) return keyPath;
    const found = firstKeyWhere(child, test, keyPath);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The frontmatter keys the gate's rules are read from. */
const RULE_KEYS: readonly string[] = [
  ...new Set([
    ...Object.keys(PLANNER_CANONICAL),
    ...Object.keys(EXECUTOR_CANONICAL),
    "prompt_id",
    "dry_run_required",
    "allowed_modes",
    "default_mode",
  ]),
];
const RULE_KEY_SET = new Set(RULE_KEYS);

/**
 * The rule key that `key` most likely misspells: the same but for case, its
 * first words alone (`dry_run`), or one slip away (a letter dropped, added,
 * changed or two swapped; two slips for keys of 12 letters or more);
 * undefined for a rule key itself and for any other key.
 */
export function misspeltRuleKey(key: string): string | undefined {
  // A suite's prompts share their key names: each name is judged once per process, and found again by one lookup.
  const judged = judgedKeys.get(key);
  if (judged !== undefined) return judged === NO_SLIP ? undefined : judged;
  // No rule key is within two slips of a name this long (spaces around it aside): judged without the memory.
  if (key.trim().length > 32) return undefined;
  const meant = closestRuleKey(key);
  // Kept as a string of its own, so the memory never holds on to the file text a key was sliced from.
  if (judgedKeys.size < 10_000 + RULE_KEYS.length) judgedKeys.set(Buffer.from(key, "utf8").toString("utf8"), meant ?? NO_SLIP);
  return meant;
}

/** What `judgedKeys` holds for a name that misspells no rule (a rule key itself among them). */
const NO_SLIP = "";
const judgedKeys = new Map<string, string>(RULE_KEYS.map((rule) => [rule, NO_SLIP]));

/**
 * The rule `key` misspells when its value has that rule's shape too (a
 * boolean for `dry_run_required`, a mode for `allowed_modes`, a prompt ID for
 * `paired_prompt_id`); undefined otherwise. `allowed_models: [gpt-4o]` is a
 * key of its own, not a misspelt `allowed_modes`.
 */
export function misspeltRule(key: string, value: unknown): string | undefined {
  const rule = misspeltRuleKey(key);
  return rule !== undefined && holdsRuleValue(rule, value) ? rule : undefined;
}

function holdsRuleValue(rule: string, value: unknown): boolean {
  // Spelled as a person might: `draft-only`, `Apply Safe`.
  const text = (v: unknown) =>
    typeof v === "string"
      ? v
          .trim()
          .toUpperCase()
          .replace(/[-\s]+/g, "_")
      : undefined;
  if (rule === "allowed_modes" || rule === "default_mode")
    return (Array.isArray(value) ? value : [value]).some((v) => (MODES as readonly string[]).includes(text(v) ?? ""));
  if (rule === "prompt_id" || rule.endsWith("_prompt_id")) return value === null || /^[A-Z][A-Z0-9]*_[0-9]+$/.test(text(value) ?? "");
  if (rule === "prompt_role") return (PROMPT_ROLES as readonly string[]).includes(text(value)?.toLowerCase() ?? "");
  if (rule === "review_cycle") return typeof value === "string";
  // The rest are flags, which a person may write in any words (`dry_run: required`): any value is one.
  return value !== null && value !== undefined;
}

function closestRuleKey(key: string): string | undefined {
  // Spaces around a name are no slip a person sees.
  const lower = key.trim().toLowerCase();
  if (RULE_KEY_SET.has(lower)) return lower;
  // A rule's first words alone (`dry_run` for dry_run_required, `paired_prompt` for paired_prompt_id) mean it too.
  const shortened = RULE_KEYS.find((rule) => lower.includes("_") && rule.startsWith(`${lower}_`));
  if (shortened !== undefined) return shortened;
  for (const rule of RULE_KEYS) {
    const limit = rule.length >= 12 ? 2 : 1;
    // Most keys differ in length by more than the limit: answered without a distance.
    if (Math.abs(rule.length - lower.length) > limit) continue;
    if (editDistance(lower, rule) <= limit) return rule;
  }
  return undefined;
}

/** The full YAML parse, for frontmatter outside the fast path's subset. Positions are file positions. */
export function parseWithYaml(yamlText: string, file: string): SimpleFrontmatter | { diagnostics: Diagnostic[] } {
  const { isMap, isScalar, isSeq, LineCounter, parseDocument } = loadYaml();
  const lineCounter = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(yamlText, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true });
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return {
      diagnostics: [
        { code: "FRONTMATTER_YAML", severity: "error", file, line: 2, col: 1, message: "invalid YAML: nested too deeply to read" },
      ],
    };
  }
  // The YAML starts on file line 2, so every YAML position shifts by one line.
  const toPos = (offset: number): Position => {
    const p = lineCounter.linePos(offset);
    return { line: p.line + 1, col: p.col };
  };
  const problem = (pos: Position, code: Diagnostic["code"], message: string): Diagnostic => ({
    code,
    severity: "error",
    file,
    line: pos.line,
    col: pos.col,
    message,
  });
  if (doc.errors.length > 0) {
    return {
      diagnostics: doc.errors.map((error) => problem(toPos(error.pos[0]), "FRONTMATTER_YAML", yamlErrorMessage(error, yamlText))),
    };
  }
  if (!isMap(doc.contents)) {
    return {
      diagnostics: [problem({ line: 2, col: 1 }, "FRONTMATTER_NOT_MAPPING", "the frontmatter must be a YAML mapping of keys to values")],
    };
  }
  // What YAML tools read differently from twinlock (a directive, a merge, an alias as a key) is refused.
  const trap = findYamlTrap(doc);
  if (trap) return { diagnostics: [problem(toPos(trap.offset), "FRONTMATTER_YAML", `the frontmatter holds ${trap.message}`)] };
  const positions = new Map<string, Position>();
  for (const pair of doc.contents.items) {
    if (!isScalar(pair.key)) continue;
    const key = String(pair.key.value);
    if (pair.key.range) positions.set(key, toPos(pair.key.range[0]));
    if (isSeq(pair.value)) {
      pair.value.items.forEach((item, i) => {
        const range = (item as { range?: [number, number, number] }).range;
        if (range) positions.set(`${key}[${i}]`, toPos(range[0]));
      });
    } else if (pair.value && (pair.value as { range?: [number, number, number] }).range) {
      positions.set(`${key}=`, toPos((pair.value as { range: [number, number, number] }).range[0]));
    }
  }
  try {
    const data = doc.toJS({ maxAliasCount: 100 }) as Record<string, unknown>;
    // Tags such as !!omap, !!set or !!binary make values JSON has no form for (Map, Set, bytes): what other tools read from them differs.
    const kind = plainDataProblem(data);
    if (kind !== "plain")
      return {
        diagnostics: [
          problem(
            { line: 2, col: 1 },
            "FRONTMATTER_YAML",
            kind === "cyclic"
              ? "the frontmatter holds a value inside itself (an alias to its own anchor); write the value out"
              : "the frontmatter uses a tagged collection or value (such as !!omap, !!set or !!binary); write a plain mapping, list or string",
          ),
        ],
      };
    return { data, positions };
  } catch (error) {
    // An alias bomb, nesting too deep (or any other resolution failure) is bad input, not a crash.
    return { diagnostics: [problem({ line: 2, col: 1 }, "FRONTMATTER_YAML", invalidYaml(error))] };
  }
}

/**
 * "plain" when `value` is only null, booleans, numbers, strings, arrays and
 * plain objects, with no object inside itself (an alias to its own anchor,
 * `a: &x [*x]`, would make every walk over it endless); else what it holds.
 */
function plainDataProblem(value: unknown, ancestors = new Set<object>()): "plain" | "tagged" | "cyclic" {
  if (value === null || typeof value === "boolean" || typeof value === "number" || typeof value === "string") return "plain";
  if (typeof value !== "object") return "tagged";
  if (ancestors.has(value)) return "cyclic";
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return "tagged";
  ancestors.add(value);
  for (const child of Object.values(value as object)) {
    const problem = plainDataProblem(child, ancestors);
    if (problem !== "plain") return problem;
  }
  ancestors.delete(value);
  return "plain";
}
