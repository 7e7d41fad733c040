import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Suite } from "../suite/load-suite.js";
import { type Prompt, positionOf } from "../suite/prompt.js";
import { EXECUTOR_CANONICAL, PLANNER_CANONICAL, TWIN } from "./canonical-metadata.js";
import { findOverrideKeys } from "./find-override-keys.js";

/** True when a prompt takes part in pairing at all (declares a twin or requires one). */
export function isPairMember(prompt: Prompt): boolean {
  return prompt.pairingRequired || prompt.pairedPromptId !== null;
}

/**
 * Every pairing problem of one prompt, judged against the suite: twin exists,
 * is reciprocal, roles fit, canonical metadata exact, the executor requires
 * its planner, and no key re-routes the twin. This one function is what both
 * `validate` and the runtime's twin resolution stand on.
 */
export function checkPairMember(suite: Suite, prompt: Prompt): readonly Diagnostic[] {
  // A suite is never changed after loading, so each prompt is judged once per suite
  // even though validate, the pair count and the refusal check all ask.
  let memo = MEMO.get(suite);
  if (!memo) {
    memo = new Map();
    MEMO.set(suite, memo);
  }
  let found = memo.get(prompt);
  if (!found) {
    found = judgePairMember(suite, prompt);
    memo.set(prompt, found);
  }
  return found;
}

const MEMO = new WeakMap<Suite, Map<Prompt, readonly Diagnostic[]>>();

function judgePairMember(suite: Suite, prompt: Prompt): Diagnostic[] {
  const out: Diagnostic[] = [];
  const report = (code: Diagnostic["code"], key: string, message: string) => {
    const pos = positionOf(prompt, key);
    out.push({ code, severity: "error", file: prompt.file, line: pos.line, col: pos.col, message, promptId: prompt.id, field: key });
  };

  for (const o of findOverrideKeys(prompt.frontmatter)) {
    const carried = o.carriedId ? ` (it names ${o.carriedId})` : "";
    report(
      "OVERRIDE_KEY",
      o.topKey,
      `${prompt.id}: key \`${o.path}\`${carried} is a second source of truth for the twin; remove it — only \`paired_prompt_id\` names the twin`,
    );
  }

  if (!isPairMember(prompt)) return out;
  const twinId = prompt.pairedPromptId;
  if (twinId === null) {
    report(
      "PAIR_REQUIRED_WITHOUT_TWIN",
      "pairing_required",
      `${prompt.id}: \`pairing_required: true\` but \`paired_prompt_id\` is null; name the twin or set pairing_required: false`,
    );
    return out;
  }
  if (!prompt.pairingRequired) {
    report(
      "PAIR_TWIN_WITHOUT_REQUIRED",
      "pairing_required",
      `${prompt.id}: names twin ${twinId} but \`pairing_required\` is not true; both members of a pair declare pairing_required: true`,
    );
  }
  if (prompt.role !== "investigative" && prompt.role !== "executive") {
    report(
      "PAIR_ROLE",
      "prompt_role",
      `${prompt.id}: \`prompt_role\` of a paired prompt must be \`investigative\` (planner) or \`executive\` (executor), found ${foundRole(prompt, "none")}`,
    );
    return out;
  }
  const isPlanner = prompt.role === "investigative";
  if (twinId === prompt.id) {
    report("PAIR_NOT_RECIPROCAL", "paired_prompt_id", `${prompt.id}: \`paired_prompt_id\` names the prompt itself; name its twin`);
    return out;
  }
  const twin = suite.byId.get(twinId);
  if (!twin) {
    report(
      "PAIR_TARGET_MISSING",
      "paired_prompt_id",
      `${prompt.id}: \`paired_prompt_id\` ${twinId} names no prompt in the suite; add ${twinId} or fix the ID`,
    );
  } else {
    const wantRole = isPlanner ? "executive" : "investigative";
    if (twin.role !== wantRole) {
      report(
        "PAIR_ROLE",
        "paired_prompt_id",
        `${prompt.id}: twin ${twinId} has prompt_role ${foundRole(twin, "(none)")}, but the twin of ${isPlanner ? "a planner" : "an executor"} must be \`${wantRole}\``,
      );
    }
    if (twin.pairedPromptId !== prompt.id) {
      report(
        "PAIR_NOT_RECIPROCAL",
        "paired_prompt_id",
        `${prompt.id}: names ${twinId} as its twin, but ${twinId} (${twin.file}) has paired_prompt_id ${twin.pairedPromptId ?? "null"}; the twin must name ${prompt.id} back`,
      );
    }
  }

  const canonical = isPlanner ? PLANNER_CANONICAL : EXECUTOR_CANONICAL;
  const who = isPlanner ? "paired planner" : "paired executor";
  for (const [key, expectedRaw] of Object.entries(canonical)) {
    if (key === "paired_prompt_id" || key === "prompt_role") continue;
    const expected = expectedRaw === TWIN ? twinId : expectedRaw;
    const actual = prompt.frontmatter[key];
    if (actual !== expected) {
      report(
        "PAIR_METADATA",
        key,
        `${prompt.id}: a ${who} must declare \`${key}: ${String(expected)}\`, found ${actual === undefined ? "nothing" : `\`${JSON.stringify(actual)}\``}`,
      );
    }
  }
  if (!isPlanner && !prompt.requires.includes(twinId)) {
    report("PAIR_EXECUTOR_REQUIRES", "requires", `${prompt.id}: an executor must list its planner ${twinId} in \`requires\``);
  }
  return out;
}

/** A prompt's role as its file states it: a known role, the text of one that is not a role (quoted), or `none`. */
export function foundRole(prompt: Prompt, none: string): string {
  if (prompt.role !== undefined) return prompt.role;
  const text = prompt.frontmatter.prompt_role;
  return typeof text === "string" ? `${JSON.stringify(text)} (not a role)` : none;
}
