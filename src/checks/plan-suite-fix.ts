import { isDeepStrictEqual } from "node:util";
import { FILL_IN_MARK } from "../suite/fill-in-placeholder.js";
import type { Suite } from "../suite/load-suite.js";
import { parseBodyBlocks } from "../suite/parse-body-blocks.js";
import { MAX_PROMPT_BYTES, parsePromptFile } from "../suite/parse-prompt-file.js";
import type { Prompt } from "../suite/prompt.js";
import { EXECUTOR_CANONICAL, PLANNER_CANONICAL, TWIN } from "../twin/canonical-metadata.js";
import { blockSkeleton } from "./block-skeleton.js";
import { resolveBodyRules } from "./body-rules.js";

/** One prompt file's additions: its text before and after, and what was added or left. */
export interface FileFix {
  /** POSIX path relative to the suite root. */
  file: string;
  /** `sha256:<hex>` of the bytes the plan was made from: a write refuses a file that no longer hashes to it. */
  sha256: string;
  before: string;
  after: string;
  keys: string[];
  blocks: string[];
  /** Blocks given a FILL_IN_MARK placeholder, which validate goes on reporting. */
  placeholders: string[];
}

/** What `validate --fix` would add, and what it leaves to a person (with the reason). */
export interface SuiteFix {
  files: FileFix[];
  left: Array<{ file: string; promptId: string; message: string }>;
}

/**
 * Plan the additions `validate --fix` makes to a loaded suite: for each
 * prompt, the canonical pair metadata keys it lacks (SPEC §2; values from
 * the pair's own link, `paired_prompt_id`, read from either member) and a
 * skeleton for each required body block it lacks. Only absent keys and
 * absent blocks are added, each file's existing bytes kept as they are:
 * keys go in as new lines before the closing `---`, blocks after the last
 * line. A key present with another value, an unclosed block, a role or twin
 * that cannot be read from the suite, are left, each with a reason. Pure:
 * reads nothing but `suite`.
 */
export function planSuiteFix(suite: Suite): SuiteFix {
  const rules = resolveBodyRules(suite.config.body_rules);
  const files: FileFix[] = [];
  const left: SuiteFix["left"] = [];
  // Who names each ID as its twin: a prompt named by exactly one other, and naming none itself, is that one's twin.
  const namedBy = new Map<string, Prompt[]>();
  for (const p of suite.byId.values()) {
    if (p.pairedPromptId === null) continue;
    const list = namedBy.get(p.pairedPromptId);
    if (list) list.push(p);
    else namedBy.set(p.pairedPromptId, [p]);
  }
  for (const prompt of suite.prompts) {
    const leave = (message: string) => left.push({ file: prompt.file, promptId: prompt.id, message });
    // A duplicated ID is a problem no addition can settle.
    if (suite.duplicates.has(prompt.id)) continue;
    const keys: Array<[string, string]> = [];
    const fm = prompt.frontmatter;
    let twinId = prompt.pairedPromptId;
    if (twinId === null && !("paired_prompt_id" in fm)) {
      const namers = namedBy.get(prompt.id) ?? [];
      if (namers.length === 1) {
        twinId = (namers[0] as Prompt).id;
        keys.push(["paired_prompt_id", twinId]);
      } else if (namers.length > 1)
        leave(`named as twin by ${namers.map((n) => n.id).join(", ")}; a prompt has one twin, so paired_prompt_id is yours to choose`);
    }
    const twin = twinId === null ? undefined : suite.byId.get(twinId);
    let side: "planner" | "executor" | "unpaired" = "unpaired";
    const paired = twinId !== null || prompt.pairingRequired;
    if (paired && twinId !== null && twin) {
      const role = prompt.role ?? (twin.role === "investigative" ? "executive" : twin.role === "executive" ? "investigative" : undefined);
      if (role === undefined)
        leave(`neither ${prompt.id} nor its twin ${twinId} has a prompt_role; set investigative (planner) or executive (executor)`);
      else if (role !== "investigative" && role !== "executive") leave(`prompt_role ${role} cannot be paired; pair metadata not added`);
      else if (twin.pairedPromptId !== null && twin.pairedPromptId !== prompt.id)
        leave(`its twin ${twinId} names ${twin.pairedPromptId} back; pair metadata not added`);
      else {
        side = role === "investigative" ? "planner" : "executor";
        if (prompt.role === undefined && !("prompt_role" in fm)) keys.push(["prompt_role", role]);
        const canonical = side === "planner" ? PLANNER_CANONICAL : EXECUTOR_CANONICAL;
        for (const [key, raw] of Object.entries(canonical)) {
          if (key === "prompt_role" || key === "paired_prompt_id") continue;
          const value = raw === TWIN ? twinId : raw;
          if (!(key in fm)) keys.push([key, String(value)]);
          else if (fm[key] !== value) leave(`\`${key}\` is ${JSON.stringify(fm[key])}, not ${String(value)}; left as you wrote it`);
        }
        if (side === "executor") {
          if (!("requires" in fm)) keys.push(["requires", `[${twinId}]`]);
          else if (!prompt.requires.includes(twinId))
            leave(`\`requires\` lacks its planner ${twinId}; add it to the list (your line, left as it is)`);
        }
      }
    } else if (paired && twinId !== null) leave(`its twin ${twinId} is not in the suite; pair metadata not added`);
    else if (paired) leave("pairing_required but no twin is named or names it; set paired_prompt_id");

    const found = parseBodyBlocks(prompt.body, prompt.bodyLine);
    const required =
      side === "planner"
        ? [...rules.allBlocks, ...rules.plannerBlocks]
        : side === "executor"
          ? [...rules.allBlocks, ...rules.executorBlocks]
          : rules.allBlocks;
    const blocks: Array<[string, string]> = [];
    for (const tag of new Set(required)) {
      const block = found.get(tag);
      if (!block) blocks.push([tag, blockSkeleton(tag, rules, { side, twinId })]);
      else if (!block.closed) leave(`<${tag}> is never closed; close it where it ends (only you know where)`);
    }
    if (keys.length === 0 && blocks.length === 0) continue;
    const fix = applyAdditions(prompt, keys, blocks);
    if (typeof fix === "string") leave(fix);
    else files.push(fix);
  }
  return { files, left };
}

/** The file with `keys` inserted before its closing `---` and `blocks` appended, checked by parsing it again. */
function applyAdditions(prompt: Prompt, keys: Array<[string, string]>, blocks: Array<[string, string]>): FileFix | string {
  const before = prompt.source;
  // The file's own line ends, so no line it has changes.
  const eol = before.includes("\r\n") ? "\r\n" : "\n";
  const close = closingFenceOffset(before);
  if (close === undefined) return "no closed frontmatter to add keys to";
  const keyText = keys.map(([k, v]) => `${k}: ${v}${eol}`).join("");
  // A last line without a line end gets one, so what follows starts a line of its own and that line is unchanged.
  const blockText =
    blocks.length === 0
      ? ""
      : (before.endsWith("\n") || before === "" ? "" : eol) +
        blocks.map(([tag, content]) => `${eol}<${tag}>${eol}${content.split("\n").join(eol)}${eol}</${tag}>${eol}`).join("");
  const after = before.slice(0, close) + keyText + before.slice(close) + blockText;
  // A file the additions would take past the prompt limit would no longer be read at all.
  if (Buffer.byteLength(after, "utf8") > MAX_PROMPT_BYTES)
    return `the additions would take the file past the ${MAX_PROMPT_BYTES}-byte prompt limit; split it first`;
  // Parsed again: the frontmatter must be what it was plus exactly the new keys, and every new block found whole.
  const reparsed = parsePromptFile(prompt.file, Buffer.from(after, "utf8")).prompt;
  const ok =
    reparsed !== undefined &&
    reparsed.id === prompt.id &&
    Object.keys(reparsed.frontmatter).length === Object.keys(prompt.frontmatter).length + keys.length &&
    Object.entries(prompt.frontmatter).every(([k, v]) => isDeepStrictEqual(reparsed.frontmatter[k], v)) &&
    keys.every(([k]) => reparsed.frontmatter[k] !== undefined) &&
    blocks.every(([tag]) => parseBodyBlocks(reparsed.body, reparsed.bodyLine).get(tag)?.closed === true);
  if (!ok) return "the frontmatter's form leaves no place to add keys as new lines; add them by hand";
  return {
    file: prompt.file,
    sha256: prompt.sha256,
    before,
    after,
    keys: keys.map(([k]) => k),
    blocks: blocks.map(([t]) => t),
    placeholders: blocks.filter(([, content]) => content.includes(FILL_IN_MARK)).map(([t]) => t),
  };
}

/** Offset of the line `---` that closes the frontmatter (as splitFrontmatter finds it), or undefined. */
function closingFenceOffset(text: string): number | undefined {
  let start = 0;
  while (text.startsWith("\uFEFF", start)) start++;
  const firstEnd = text.indexOf("\n", start);
  if (firstEnd === -1 || text.slice(start, firstEnd).trimEnd() !== "---") return undefined;
  const yamlStart = firstEnd + 1;
  for (let at = text.indexOf("---", yamlStart); at !== -1; at = text.indexOf("---", at + 3)) {
    if (at !== yamlStart && text.charCodeAt(at - 1) !== 10) continue;
    const end = text.indexOf("\n", at);
    if (text.slice(at, end === -1 ? text.length : end).trimEnd() === "---") return at;
  }
  return undefined;
}
