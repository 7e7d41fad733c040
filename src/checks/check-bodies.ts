import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { FILL_IN_MARK } from "../suite/fill-in-placeholder.js";
import type { Suite } from "../suite/load-suite.js";
import { type BodyBlock, foldText, parseBodyBlocks } from "../suite/parse-body-blocks.js";
import type { Position, Prompt } from "../suite/prompt.js";
import { isPairMember } from "../twin/check-pair-member.js";
import { resolveBodyRules } from "./body-rules.js";

/**
 * SPEC §2's body rules for every prompt: the marker block and the boundary
 * blocks for all; the review gate (naming the twin, with every phrase) and
 * the handoff contract for planners; the authority, decision and
 * verification-reference blocks for executors, which must not copy the
 * planner's verification list.
 */
export function checkBodies(suite: Suite): Diagnostic[] {
  const rules = resolveBodyRules(suite.config.body_rules);
  const out: Diagnostic[] = [];
  const blocksOf = new Map<string, Map<string, BodyBlock>>();
  const blocks = (p: Prompt) => {
    let b = blocksOf.get(p.file);
    if (!b) {
      b = parseBodyBlocks(p.body, p.bodyLine);
      blocksOf.set(p.file, b);
    }
    return b;
  };
  const foldedPhrases = rules.gatePhrases.map((ph) => ({ phrase: ph, folded: foldText(ph) }));
  const executiveIds = new Set(suite.prompts.filter((p) => p.role === "executive").map((p) => p.id));
  const requiredOfAll = rules.allBlocks;
  const requiredOfPlanner = [...rules.allBlocks, ...rules.plannerBlocks];
  const requiredOfExecutor = [...rules.allBlocks, ...rules.executorBlocks];

  for (const prompt of suite.prompts) {
    const found = blocks(prompt);
    const report = (code: Diagnostic["code"], pos: Position, field: string, message: string) =>
      out.push({
        code,
        severity: WARNING_CODES.has(code) ? "warning" : "error",
        file: prompt.file,
        line: pos.line,
        col: pos.col,
        promptId: prompt.id,
        field,
        message,
      });
    const bodyStart = { line: prompt.bodyLine, col: 1 };
    const paired = isPairMember(prompt);
    const planner = paired && prompt.role === "investigative";
    const executor = paired && prompt.role === "executive";
    const required = planner ? requiredOfPlanner : executor ? requiredOfExecutor : requiredOfAll;
    for (const tag of required) {
      const block = found.get(tag);
      if (!block) report("BODY_BLOCK_MISSING", bodyStart, tag, `${prompt.id}: body has no <${tag}> block; add <${tag}> … </${tag}>`);
      else if (!block.closed) report("BODY_BLOCK_UNCLOSED", block.position, tag, `${prompt.id}: <${tag}> is never closed by </${tag}>`);
      else if (block.content.includes(FILL_IN_MARK))
        report(
          "BODY_PLACEHOLDER",
          block.position,
          tag,
          `${prompt.id}: <${tag}> still holds the ${FILL_IN_MARK} placeholder \`validate --fix\` wrote; replace it with this prompt's own text`,
        );
    }

    const markerBlock = found.get("runtime_markers");
    if (markerBlock) {
      const missing = rules.markers.filter((m) => !markerBlock.content.includes(m));
      if (missing.length > 0)
        report(
          "BODY_MARKER_MISSING",
          markerBlock.position,
          "runtime_markers",
          `${prompt.id}: <runtime_markers> does not name ${missing.join(", ")}; name all ${rules.markers.length} markers`,
        );
    }

    const twinId = prompt.pairedPromptId;
    if (planner && twinId !== null) {
      const gate = found.get(rules.gateBlock);
      if (gate) {
        const named = mentionedIds(gate.content);
        if (!named.has(twinId))
          report(
            "BODY_TWIN_NOT_NAMED",
            gate.position,
            rules.gateBlock,
            `${prompt.id}: <${rules.gateBlock}> does not name the exact twin ${twinId}`,
          );
        const folded = foldText(gate.content);
        const missing = foldedPhrases.filter((ph) => !folded.includes(ph.folded)).map((ph) => ph.phrase);
        if (missing.length > 0)
          report(
            "BODY_PHRASE_MISSING",
            gate.position,
            rules.gateBlock,
            `${prompt.id}: <${rules.gateBlock}> lacks the phrase${missing.length > 1 ? "s" : ""} ${missing.map((m) => `"${m}"`).join(", ")}`,
          );
        for (const other of named) {
          if (other !== twinId && executiveIds.has(other))
            report(
              "BODY_ALTERNATE_EXECUTOR",
              gate.position,
              rules.gateBlock,
              `${prompt.id}: <${rules.gateBlock}> names executor ${other}, but the only executor of this plan is ${twinId}; name only the exact twin in the gate`,
            );
        }
      }
    }

    if (executor && twinId !== null) {
      const authority = found.get(rules.authorityBlock);
      if (authority && !mentionsId(authority.content, twinId))
        report(
          "BODY_TWIN_NOT_NAMED",
          authority.position,
          rules.authorityBlock,
          `${prompt.id}: <${rules.authorityBlock}> does not name its planner ${twinId}`,
        );
      const plannerPrompt = suite.byId.get(twinId);
      const design = plannerPrompt ? blocks(plannerPrompt).get(rules.verificationDesignBlock) : undefined;
      if (design) {
        const designItems = new Set(listItems(design.content).filter((i) => i.length >= rules.copiedItemMinLength));
        const copied = !mayHoldCopy(prompt.body, designItems)
          ? []
          : prompt.body
              .split("\n")
              .map((line, i) => ({ text: normalizeItem(line), line: prompt.bodyLine + i }))
              .filter((l) => designItems.has(l.text));
        if (copied.length > 0) {
          const first = copied[0] as { text: string; line: number };
          report(
            "BODY_COPIED_VERIFICATION",
            { line: first.line, col: 1 },
            rules.verificationDesignBlock,
            `${prompt.id}: ${copied.length} line${copied.length > 1 ? "s" : ""} copied from ${twinId}'s <${rules.verificationDesignBlock}> (first: "${first.text}"); refer to the planner's acceptance criteria instead of copying them`,
          );
        }
      }
    }
  }
  return out;
}

/**
 * Naming another executor in the gate may be a warning ("MD-28 must not run
 * this") or a reroute; prose cannot tell which, so it is flagged, not failed.
 */
const WARNING_CODES = new Set<Diagnostic["code"]>(["BODY_ALTERNATE_EXECUTOR"]);

const ID_IN_TEXT = /(?<![A-Za-z0-9_-])[A-Z][A-Z0-9]*-[0-9]+(?![A-Za-z0-9_-])/g;

function mentionedIds(text: string): Set<string> {
  return new Set(text.match(ID_IN_TEXT) ?? []);
}

function mentionsId(text: string, id: string): boolean {
  return mentionedIds(text).has(id);
}

/**
 * Whether some line of `body` could normalize to one of `items`: only when
 * every word of the item stands in the lower-cased body, as normalizing a
 * line changes its case, white space, list marker and closing punctuation
 * but no letter inside a word. Most bodies hold no item, and skip the
 * per-line work at the cost of a few substring searches.
 */
function mayHoldCopy(body: string, items: ReadonlySet<string>): boolean {
  if (items.size === 0) return false;
  const lower = body.toLowerCase();
  for (const item of items) if (item.split(" ").every((word) => lower.includes(word))) return true;
  return false;
}

function listItems(text: string): string[] {
  return text
    .split("\n")
    .filter((l) => /^\s*([-*+]|\d+[.)])\s+/.test(l))
    .map(normalizeItem);
}

function normalizeItem(line: string): string {
  return foldText(line.replace(/^\s*([-*+]|\d+[.)])\s+/, "")).replace(/[.;:,]+$/, "");
}
