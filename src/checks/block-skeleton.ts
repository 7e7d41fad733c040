import { fillIn } from "../suite/fill-in-placeholder.js";
import { foldText } from "../suite/parse-body-blocks.js";
import type { ResolvedBodyRules } from "./body-rules.js";

/** Who a block is written for: the prompt's role in its pair (or none) and its twin's ID. */
export interface SkeletonFor {
  side: "planner" | "executor" | "unpaired";
  twinId: string | null;
  /** The twin's title, named beside its ID in the planner's gate block (new-pair knows it; validate --fix leaves it out). */
  twinTitle?: string;
}

/**
 * The content `validate --fix` gives a missing body block: the canonical text
 * (SPEC §2, the seed guide) where it follows from the rules, the role and
 * the twin alone; a FILL_IN_MARK placeholder where the text is the author's
 * own policy (what the prompt may touch, which tools it may use) or the block
 * is one twinlock does not know.
 */
export function blockSkeleton(tag: string, rules: ResolvedBodyRules, who: SkeletonFor): string {
  const twin = who.twinId ?? "";
  if (tag === "runtime_markers") return rules.markers.map((m) => `- \`${m}\``).join("\n");
  if (who.side === "planner" && tag === rules.gateBlock) {
    const text = [
      `Freeze the handoff and present it for user review; invite requested changes and record them without treating`,
      `them as approval; revise every affected record, re-run readiness and re-freeze under a new hash before asking`,
      `for review again. After explicit approval, ask one execution consent question naming the exact execution twin`,
      `${twin}${who.twinTitle ? ` (${who.twinTitle})` : ""}. No other executor may act on this plan.`,
    ].join("\n");
    // A suite's own gate phrases the canonical text lacks are named too: the gate check reads them.
    const folded = foldText(text);
    const missing = rules.gatePhrases.filter((phrase) => !folded.includes(foldText(phrase)));
    return missing.length === 0 ? text : `${text}\n${missing.map((phrase) => `- ${phrase}`).join("\n")}`;
  }
  if (who.side === "planner" && tag === "handoff_contract")
    return [
      "Write evidence_index.json, finding_register.json, action_plan.json and acceptance_criteria.json;",
      "every finding cites evidence, every action cites findings and the criteria that verify it.",
      "Run `twinlock readiness` until it passes.",
    ].join("\n");
  if (who.side === "executor" && tag === rules.authorityBlock)
    return [
      `Act only on the handoff of ${twin} that a person reviewed, approved and consented to, after \`twinlock admit\``,
      "succeeds for this prompt. Any mismatch is !STOP:invalid-reviewed-handoff-or-exact-twin-consent.",
    ].join("\n");
  if (who.side === "executor" && tag === "decision_rules")
    return "Follow the plan's order and dependencies; on any surprise, stop rather than improvise.";
  if (who.side === "executor" && tag === "verification_reference")
    return `Run every =VERIFY check listed in the frozen acceptance_criteria.json of ${twin}, as the planner designed them.`;
  if (tag === "authorization_boundary") return fillIn("what this prompt may change, and what it must never touch.");
  if (tag === "tool_policy") return fillIn("the tools this prompt may use, and those it must not.");
  return fillIn(`the <${tag}> text this suite's body_rules ask for.`);
}
