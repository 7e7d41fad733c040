import { isUtf8 } from "node:buffer";
import { closeSync, readdirSync, readSync, statSync } from "node:fs";
import path from "node:path";
import { z } from "zod/mini";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { UsageError } from "../errors/errors.js";
import { BUDGETS, BudgetError, requireYamlWithin } from "../input/budgets.js";
import { findDeceptiveChar } from "../input/clean-text.js";
import { closestChoice } from "../input/closest-choice.js";
import { openRegularFileWithStats, readFailureCode, readRegularFile } from "../input/read-regular-file.js";
import { safeParseFewIssues, safeParseFirstIssue } from "../schemas/first-issue.js";
import { loadYaml } from "./load-yaml.js";
import type { ParseCache } from "./parse-cache.js";
import { MAX_PROMPT_BYTES, parsePromptFile } from "./parse-prompt-file.js";
import { parseSimpleFrontmatter } from "./parse-simple-frontmatter.js";
import type { Prompt } from "./prompt.js";
import { type PromptSelection, promptSelection } from "./prompt-selection.js";
import { CONFIG_FILE, type SuiteConfig, SuiteConfigSchema } from "./suite-config.js";
import { invalidYaml, yamlErrorMessage } from "./yaml-error-message.js";
import { findYamlTrap } from "./yaml-traps.js";

/** A loaded suite: every prompt that parsed, the config, and every problem met on the way. */
export interface Suite {
  /** Absolute path of the suite folder. */
  root: string;
  /** Prompts sorted by file path. A duplicated ID appears once per file. */
  prompts: Prompt[];
  /** First prompt (by file path) for each ID. */
  byId: Map<string, Prompt>;
  /** IDs declared by more than one file, with every file. */
  duplicates: Map<string, Prompt[]>;
  config: SuiteConfig;
  /** Problems found while reading files and the config. */
  diagnostics: Diagnostic[];
  /**
   * True when only the prompts that may declare some IDs were parsed
   * (`loadSuite(root, { promptIds })`): `prompts` then holds those, and
   * `byId`/`duplicates` are exact for those IDs and their twins only.
   */
  partial?: boolean;
}

/** What `loadSuite` parses. */
export interface LoadSuiteOptions {
  /**
   * Parse only what deciding about these prompts and their twins needs.
   * Every prompt file is still read, and a file is parsed when its bytes
   * hold one of the IDs, a backslash (a YAML escape could spell an ID
   * otherwise), a NUL byte or anything but UTF-8 (UTF-16 spells it in other
   * bytes): no file that could declare one of them is skipped, so the
   * IDs' uniqueness and the twins are exactly what a full load would find.
   * Twins are followed until no new ID appears.
   */
  promptIds?: readonly string[];
  /** Frontmatter parsed before, by the bytes' digest (full loads only; see ParseCache). */
  parseCache?: ParseCache;
  /**
   * The suite's config as the caller read, hashed and checked it (a pinned
   * policy): prompts are selected by it, and twinlock.yaml is not read again,
   * so a config swapped in between cannot choose which files are prompts.
   */
  config?: SuiteConfig;
}

/**
 * Load every `*.md` under `root` (recursively; dot-folders and node_modules
 * skipped, symlinks reported and not followed so a link loop cannot trap the
 * walk) and `twinlock.yaml` if present. Never throws for bad content; throws
 * a UsageError when `root` cannot be read or holds no prompt file, or when a
 * `*.md` file or `twinlock.yaml` is a FIFO, socket, device or folder (which
 * could make a reader wait forever, so nothing goes on past it).
 */
export function loadSuite(root: string, options: LoadSuiteOptions = {}): Suite {
  const absRoot = path.resolve(root);
  const diagnostics: Diagnostic[] = [];
  const files: string[] = [];
  // The files the walk saw as regular files (by their directory entry): opened without a second look.
  const regular = new Set<string>();
  // The config first: its `prompts`/`exclude` say which files are prompts, so no other file is read.
  const { config, diagnostics: configDiagnostics } = options.config
    ? { config: options.config, diagnostics: [] }
    : loadSuiteConfig(absRoot);
  const selection = promptSelection(config);
  try {
    walk(absRoot, "", { files, regular }, diagnostics, selection);
  } catch (error) {
    throw new UsageError(`cannot read suite folder ${root}: ${(error as NodeJS.ErrnoException).code ?? error}`, {
      cause: error,
    });
  }
  if (files.length === 0) {
    throw new UsageError(
      config.prompts
        ? `no prompt files under ${absRoot} match twinlock.yaml prompts (${config.prompts.join(", ")}); fix the globs`
        : `no *.md prompt files under ${absRoot}; point --suite at the folder that holds the prompts`,
    );
  }
  files.sort();
  // The walk's names are plain (never empty, `.` or `..`): joined by hand, as path.join's normalizing costs more than the read.
  const base = absRoot.endsWith(path.sep) ? absRoot : absRoot + path.sep;
  if (options.promptIds) {
    const read = files.flatMap((rel) => {
      const bytes = readLimited(base + rel, rel, diagnostics, regular.has(rel));
      return bytes ? [{ rel, bytes }] : [];
    });
    const prompts = parseFilesDeclaring(read, options.promptIds, diagnostics);
    diagnostics.push(...configDiagnostics);
    return { ...indexSuite(absRoot, prompts, config, diagnostics), partial: true };
  }
  const prompts: Prompt[] = [];
  for (const rel of files) {
    const bytes = readLimited(base + rel, rel, diagnostics, regular.has(rel));
    if (!bytes) continue;
    const parsed = parsePromptFile(rel, bytes, options.parseCache);
    diagnostics.push(...parsed.diagnostics);
    if (parsed.prompt) prompts.push(parsed.prompt);
  }
  diagnostics.push(...configDiagnostics);
  return indexSuite(absRoot, prompts, config, diagnostics);
}

/**
 * Parse the files that may declare one of `ids` or a twin of one (see
 * `LoadSuiteOptions.promptIds`), in file order.
 */
function parseFilesDeclaring(
  files: ReadonlyArray<{ rel: string; bytes: Buffer }>,
  ids: readonly string[],
  diagnostics: Diagnostic[],
): Prompt[] {
  const needed = new Set(ids);
  const parsed = new Map<number, Prompt | undefined>();
  // Each round looks only for the IDs new in it: a file left unparsed by an earlier round is UTF-8 with no backslash
  // or NUL byte, and holds none of the IDs looked for before.
  let fresh = [...needed];
  for (let round = 0; fresh.length > 0; round++) {
    const patterns = fresh.map((id) => Buffer.from(id, "utf8"));
    files.forEach(({ rel, bytes }, i) => {
      if (parsed.has(i)) return;
      // A file that is not UTF-8 (UTF-16, say, where the ID's bytes differ) or holds a NUL byte could spell any ID: parsed, so it is reported.
      const mayDeclare =
        patterns.some((p) => bytes.indexOf(p) !== -1) ||
        (round === 0 && (bytes.indexOf(0x5c) !== -1 || bytes.indexOf(0) !== -1 || !isUtf8(bytes)));
      if (!mayDeclare) return;
      const result = parsePromptFile(rel, bytes);
      diagnostics.push(...result.diagnostics);
      parsed.set(i, result.prompt);
    });
    fresh = [];
    for (const prompt of parsed.values()) {
      if (prompt && needed.has(prompt.id) && prompt.pairedPromptId !== null && !needed.has(prompt.pairedPromptId)) {
        needed.add(prompt.pairedPromptId);
        fresh.push(prompt.pairedPromptId);
      }
    }
  }
  return [...parsed.entries()].sort((a, b) => a[0] - b[0]).flatMap(([, p]) => (p ? [p] : []));
}

/** Build the ID index of already-parsed prompts, reporting duplicated IDs with both files. */
export function indexSuite(root: string, prompts: Prompt[], config: SuiteConfig, diagnostics: Diagnostic[] = []): Suite {
  const byId = new Map<string, Prompt>();
  const all = new Map<string, Prompt[]>();
  for (const p of prompts) {
    if (!byId.has(p.id)) byId.set(p.id, p);
    const list = all.get(p.id);
    if (list) list.push(p);
    else all.set(p.id, [p]);
  }
  const duplicates = new Map<string, Prompt[]>();
  for (const [id, list] of all) {
    if (list.length < 2) continue;
    duplicates.set(id, list);
    const files = list.map((p) => p.file).join(", ");
    for (const p of list) {
      const pos = p.positions.get("prompt_id") ?? { line: 1, col: 1 };
      diagnostics.push({
        code: "PROMPT_ID_DUPLICATE",
        severity: "error",
        file: p.file,
        line: pos.line,
        col: pos.col,
        message: `prompt_id ${id} is declared by ${list.length} files (${files}); give each prompt its own ID`,
        promptId: id,
        field: "prompt_id",
      });
    }
  }
  return { root, prompts, byId, duplicates, config, diagnostics };
}

function walk(
  absRoot: string,
  rel: string,
  out: { files: string[]; regular: Set<string> },
  diagnostics: Diagnostic[],
  selection: PromptSelection,
): void {
  const dir = path.join(absRoot, rel);
  const entries = readdirSync(dir, { withFileTypes: true });
  const includes = selection.within(rel);
  for (const entry of entries) {
    const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (entry.isSymbolicLink()) {
      // A link the globs would read as a prompt file, or one to a folder the walk would have entered (whatever its name:
      // `archive.v2` too), may hold what another tool reads as a prompt.
      if (
        includes(entry.name) ||
        (!entry.name.startsWith(".") &&
          entry.name !== "node_modules" &&
          selection.mayContain(childRel) &&
          linksToFolder(path.join(dir, entry.name)))
      ) {
        diagnostics.push({
          code: "SUITE_SYMLINK_SKIPPED",
          // An error, as for a gate decision: another tool may follow the link and find a prompt twinlock never read.
          severity: "error",
          file: childRel,
          line: 1,
          col: 1,
          message: "symbolic link not followed; keep prompt files as plain files inside the suite folder",
        });
      }
      continue;
    }
    if (entry.isDirectory()) {
      if (entry.name.startsWith(".") || entry.name === "node_modules" || !selection.mayContain(childRel)) continue;
      try {
        walk(absRoot, childRel, out, diagnostics, selection);
      } catch (error) {
        diagnostics.push({
          code: "FILE_UNREADABLE",
          severity: "error",
          file: childRel,
          line: 1,
          col: 1,
          message: `cannot read folder (${(error as NodeJS.ErrnoException).code ?? "error"}); fix its permissions`,
        });
      }
    } else if (includes(entry.name)) {
      // A FIFO, socket or device named *.md is kept, so that reading it refuses it by kind instead of skipping a prompt silently.
      out.files.push(childRel);
      if (entry.isFile()) out.regular.add(childRel);
    }
  }
}

/**
 * Read a prompt file unless it is larger than the prompt limit. A file that
 * cannot be opened or read is reported; one that is not a regular file is a
 * UsageError (see `openRegularFile`).
 */
function readLimited(abs: string, rel: string, diagnostics: Diagnostic[], seenRegular: boolean): Buffer | undefined {
  const unreadable = (error: unknown) =>
    diagnostics.push({
      code: "FILE_UNREADABLE",
      severity: "error",
      file: rel,
      line: 1,
      col: 1,
      message: `cannot read file (${readFailureCode(error) ?? "error"}); fix its permissions`,
    });
  let fd: number;
  let size: number;
  try {
    // Not following a link: the walk reported any link, so one found here was swapped in since.
    const opened = openRegularFileWithStats(abs, "prompt file", {
      noFollow: true,
      seenRegular,
      fix: "replace it with the prompt's Markdown file, or remove it",
    });
    fd = opened.fd;
    size = opened.stats.size;
  } catch (error) {
    if (readFailureCode(error) === undefined) throw error;
    unreadable(error);
    return undefined;
  }
  try {
    if (size > MAX_PROMPT_BYTES) {
      diagnostics.push({
        code: "FILE_TOO_LARGE",
        severity: "error",
        file: rel,
        line: 1,
        col: 1,
        message: `file is ${size} bytes, over the ${MAX_PROMPT_BYTES}-byte limit for a prompt; split it or move data out of the suite`,
      });
      return undefined;
    }
    const buffer = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    // A view is made only of a file that shrank while being read: making one costs an object per file.
    return read === size ? buffer : buffer.subarray(0, read);
  } catch (error) {
    unreadable(error);
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** `twinlock.yaml` as text, or undefined when there is none; a special file in its place is a UsageError. */
export function readConfigText(absRoot: string): string | undefined {
  try {
    return readRegularFile(path.join(absRoot, CONFIG_FILE), "suite config", {
      maxBytes: BUDGETS.suiteConfig.bytes,
      fix: `make ${CONFIG_FILE} a plain YAML file of at most ${BUDGETS.suiteConfig.bytes / 1024 / 1024} MiB (move bulky content out of it), or remove it`,
    }).toString("utf8");
  } catch (error) {
    if (readFailureCode(error) === "ENOENT") return undefined;
    throw error;
  }
}

/** Read and validate `twinlock.yaml` at the suite root; an absent file is an empty config. */
export function loadSuiteConfig(absRoot: string): { config: SuiteConfig; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  let text: string | undefined;
  try {
    text = readConfigText(absRoot);
  } catch (error) {
    const code = readFailureCode(error);
    if (code === undefined) throw error;
    diagnostics.push(configProblem(1, 1, `cannot read ${CONFIG_FILE}: ${code}`));
    return { config: {}, diagnostics };
  }
  if (text === undefined) return { config: {}, diagnostics };
  return parseSuiteConfig(text);
}

/** Parse and validate the text of a `twinlock.yaml` (for a caller that has already read and hashed its bytes). */
export function parseSuiteConfig(text: string): { config: SuiteConfig; diagnostics: Diagnostic[] } {
  // Its budget before any parser sees it (bytes, entries, nesting), named in the one diagnostic.
  try {
    requireYamlWithin(BUDGETS.suiteConfig, text, CONFIG_FILE);
  } catch (error) {
    if (!(error instanceof BudgetError)) throw error;
    return { config: {}, diagnostics: [configProblem(1, 1, error.message)] };
  }
  // The config a person reviews before pinning must read the same on a terminal as to twinlock.
  const hidden = findDeceptiveChar(text.replace(/^\uFEFF/, ""));
  if (hidden)
    return {
      config: {},
      diagnostics: [
        configProblem(
          hidden.line,
          hidden.col,
          `${CONFIG_FILE} holds ${hidden.codePoint}, a control or direction character that makes it read differently on a terminal and to other YAML parsers; remove it`,
        ),
      ],
    };
  // The common case first: YAML the fast parser reads, valid against the schema. Anything else goes the full way, for positions.
  const simple = parseSimpleFrontmatter(text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n"), 1, { positions: false });
  if (simple) {
    const quick = safeParseFirstIssue(SuiteConfigSchema, simple.data);
    if (quick.success) return { config: quick.data, diagnostics: [] };
  }
  const { isMap, isNode, LineCounter, parseDocument } = loadYaml();
  const diagnostics: Diagnostic[] = [];
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, strict: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    for (const e of doc.errors) {
      const p = lineCounter.linePos(e.pos[0]);
      diagnostics.push(configProblem(p.line, p.col, yamlErrorMessage(e, text)));
    }
    return { config: {}, diagnostics };
  }
  // The config a person reviews and pins must read the same to their YAML tools as to twinlock.
  const trap = findYamlTrap(doc);
  if (trap) {
    const p = lineCounter.linePos(trap.offset);
    return { config: {}, diagnostics: [configProblem(p.line, p.col, `${CONFIG_FILE} holds ${trap.message}`)] };
  }
  let raw: unknown;
  try {
    raw = doc.contents === null ? {} : doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    diagnostics.push(configProblem(1, 1, invalidYaml(error)));
    return { config: {}, diagnostics };
  }
  // The first few issues, not zod's every one (a list of 10,000 bad reviewers overflowed the stack in zod's merge).
  const parsed = safeParseFewIssues(SuiteConfigSchema, raw, 20);
  if (parsed.success) return { config: parsed.data, diagnostics };
  for (const issue of parsed.error.issues) {
    let keyPath = issue.path.map(String);
    // An unknown key is reported at the key itself, not its parent mapping.
    const unknown = issue.code === "unrecognized_keys" ? (issue as { keys: string[] }).keys : [];
    if (unknown.length > 0) keyPath = [...keyPath, unknown[0] as string];
    const node = doc.getIn(keyPath, true);
    let offset = isNode(node) && node.range ? node.range[0] : 0;
    if (unknown.length > 0) {
      const parent = keyPath.length > 1 ? doc.getIn(keyPath.slice(0, -1), true) : doc.contents;
      if (isMap(parent)) {
        const pair = parent.items.find((it) => isNode(it.key) && String((it.key as { value?: unknown }).value) === unknown[0]);
        if (pair && isNode(pair.key) && pair.key.range) offset = pair.key.range[0];
      }
    }
    const p = lineCounter.linePos(offset);
    const where = keyPath.length > 0 ? keyPath.join(".") : "(top level)";
    const what =
      unknown.length > 0
        ? `unknown key ${unknown.map((k) => `\`${k}\``).join(", ")}${meantKey(unknown[0] as string, issue.path.map(String))}: ${describeAcceptedKeys(issue.path.map(String))}`
        : issue.message;
    diagnostics.push(configProblem(p.line, p.col, `${where}: ${what}`));
  }
  // The rest is invalid, but valid `prompts`/`exclude` still say which files are prompts: a broken key elsewhere
  // must not make validate read the README and docs of the repository as prompts.
  // (The suite_id too, when it is one: reports name the suite.)
  const kept = Object.fromEntries(
    (["prompts", "exclude", "suite_id"] as const).flatMap((key) => {
      const value = (raw as Record<string, unknown> | null)?.[key];
      return value === undefined ? [] : [[key, value]];
    }),
  );
  const selection = z.pick(SuiteConfigSchema, { prompts: true, exclude: true, suite_id: true }).safeParse(kept);
  return { config: selection.success ? selection.data : {}, diagnostics };
}

/** " (did you mean prompts?)" when an unknown key is a near miss of one the mapping at `keyPath` accepts; else "". */
function meantKey(key: string, keyPath: readonly string[]): string {
  const meant = closestChoice(key, acceptedKeys(keyPath) ?? []);
  return meant ? ` (did you mean \`${meant}\`?)` : "";
}

/** The keys the mapping at `keyPath` of `twinlock.yaml` accepts, read from the schema; undefined when it is no mapping. */
function acceptedKeys(keyPath: readonly string[]): string[] | undefined {
  let schema: unknown = SuiteConfigSchema;
  for (const key of keyPath) {
    schema = unwrapSchema(schema);
    const shape = (schema as { shape?: Record<string, unknown> }).shape;
    if (/^[0-9]+$/.test(key) && (schema as { element?: unknown }).element) schema = (schema as { element: unknown }).element;
    else if (shape && Object.hasOwn(shape, key)) schema = shape[key];
    else return undefined;
  }
  const shape = (unwrapSchema(schema) as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : undefined;
}

/** What the mapping at `keyPath` of `twinlock.yaml` accepts, read from the schema itself so the two cannot drift. */
function describeAcceptedKeys(keyPath: readonly string[]): string {
  const keys = acceptedKeys(keyPath);
  if (!keys) return "remove it";
  const where = keyPath.length === 0 ? CONFIG_FILE : `\`${keyPath.join(".")}\``;
  return `${where} accepts only ${keys.join(", ")}`;
}

/** The schema inside wrappers (an optional's or nullable's `innerType`, an array's `element`), as classic zod's `unwrap()` gave it. */
function unwrapSchema(schema: unknown): unknown {
  let s = schema as { _zod?: { def: { innerType?: unknown; element?: unknown } } } | undefined;
  while (s?._zod && (s._zod.def.innerType ?? s._zod.def.element)) s = (s._zod.def.innerType ?? s._zod.def.element) as typeof s;
  return s;
}

/** Where a top-level key of `twinlock.yaml` sits, or the file's start. */
export function configKeyPosition(absRoot: string, key: string): { line: number; col: number } {
  try {
    const lines = (readConfigText(absRoot) ?? "").split("\n");
    const i = lines.findIndex((l) => l.startsWith(`${key}:`));
    return { line: i === -1 ? 1 : i + 1, col: 1 };
  } catch {
    return { line: 1, col: 1 };
  }
}

function configProblem(line: number, col: number, message: string): Diagnostic {
  return { code: "CONFIG_INVALID", severity: "error", file: CONFIG_FILE, line, col, message };
}

/** Whether the link at `file` leads to a folder now (a broken link, or one to a file, does not). */
function linksToFolder(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}
