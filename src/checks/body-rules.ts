import type { BodyRules } from "../suite/suite-config.js";

/** Body rules with every default of SPEC §2 filled in. */
export interface ResolvedBodyRules {
  markers: string[];
  allBlocks: string[];
  plannerBlocks: string[];
  executorBlocks: string[];
  gateBlock: string;
  gatePhrases: string[];
  authorityBlock: string;
  verificationDesignBlock: string;
  copiedItemMinLength: number;
}

/** SPEC §2's default body rules. */
export const DEFAULT_BODY_RULES: ResolvedBodyRules = {
  markers: ["@EVIDENCE:{id}", "?UNKNOWN:{id}", "#FINDING:{id}", "+ACTION:{id}", "=VERIFY:{id}", "!STOP:{reason}"],
  allBlocks: ["runtime_markers", "authorization_boundary", "tool_policy"],
  plannerBlocks: ["plan_review_and_execution_gate", "handoff_contract"],
  executorBlocks: ["reviewed_handoff_authority", "decision_rules", "verification_reference"],
  gateBlock: "plan_review_and_execution_gate",
  gatePhrases: ["user review", "requested changes", "re-freeze", "execution consent", "exact execution twin"],
  authorityBlock: "reviewed_handoff_authority",
  verificationDesignBlock: "verification_design",
  copiedItemMinLength: 12,
};

/** Merge a suite's `body_rules` over the defaults. */
export function resolveBodyRules(rules: BodyRules | undefined): ResolvedBodyRules {
  const d = DEFAULT_BODY_RULES;
  return {
    markers: rules?.markers ?? d.markers,
    allBlocks: rules?.all_blocks ?? d.allBlocks,
    plannerBlocks: rules?.planner_blocks ?? d.plannerBlocks,
    executorBlocks: rules?.executor_blocks ?? d.executorBlocks,
    gateBlock: rules?.gate_block ?? d.gateBlock,
    gatePhrases: rules?.gate_phrases ?? d.gatePhrases,
    authorityBlock: rules?.authority_block ?? d.authorityBlock,
    verificationDesignBlock: rules?.verification_design_block ?? d.verificationDesignBlock,
    copiedItemMinLength: rules?.copied_item_min_length ?? d.copiedItemMinLength,
  };
}
