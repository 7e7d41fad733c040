import { blockSkeleton, type SkeletonFor } from "./block-skeleton.js";
import { DEFAULT_BODY_RULES } from "./body-rules.js";

/** What `new-pair` needs to write a planner and its executor. */
export interface PairSpec {
  plannerId: string;
  executorId: string;
  plannerTitle: string;
  executorTitle: string;
  category: string;
  riskLevel: "low" | "medium" | "high";
  requires: string[];
}

const yamlString = (s: string) => JSON.stringify(s);
/** A body block whose text is canonical (the gate, the handoff contract, the authority): the one text `validate --fix` writes too. */
const canonical = (tag: string, who: SkeletonFor) => `<${tag}>\n${blockSkeleton(tag, DEFAULT_BODY_RULES, who)}\n</${tag}>`;
const yamlList = (ids: string[]) => `[${ids.join(", ")}]`;

/** The planner's file text: canonical metadata (SPEC §2) and every required body block. */
export function scaffoldPlanner(spec: PairSpec): string {
  const m = DEFAULT_BODY_RULES.markers;
  const planner: SkeletonFor = { side: "planner", twinId: spec.executorId, twinTitle: spec.executorTitle };
  return `---
prompt_id: ${spec.plannerId}
title: ${yamlString(spec.plannerTitle)}
prompt_role: investigative
category: ${yamlString(spec.category)}
risk_level: ${spec.riskLevel}
description: ${yamlString(`Investigates and plans ${spec.category} work for review; never changes anything.`)}
pairing_required: true
paired_prompt_id: ${spec.executorId}
plan_review_required: true
execution_consent_required: true
exact_twin_only: true
review_cycle: review_revise_refreeze_rereview_then_consent
requires: ${yamlList(spec.requires)}
related_prompts: []
default_mode: PLAN_ONLY
allowed_modes: [AUDIT_ONLY, PLAN_ONLY]
---

# ${spec.plannerTitle}

Investigate, gather evidence, and produce a frozen handoff for ${spec.executorId}. Read-only.

<runtime_markers>
- \`${m[0]}\` cites a piece of evidence in evidence_index.json.
- \`${m[1]}\` records an open question in finding_register.json.
- \`${m[2]}\` states a finding backed by evidence.
- \`${m[3]}\` names a planned action in action_plan.json.
- \`${m[4]}\` names an acceptance check in acceptance_criteria.json.
- \`${m[5]}\` halts the workflow until a person resolves the reason.
</runtime_markers>

<authorization_boundary>
Read-only: no writes, deploys or migrations. Anything that would change a system becomes a +ACTION in the plan.
</authorization_boundary>

<tool_policy>
Read files, logs and metrics. No tool that writes, deploys or sends messages.
</tool_policy>

${canonical("handoff_contract", planner)}

<verification_design>
- Describe how each acceptance criterion for ${spec.category} is checked and by whom.
</verification_design>

${canonical(DEFAULT_BODY_RULES.gateBlock, planner)}
`;
}

/** The executor's file text: canonical metadata (SPEC §2) and every required body block. */
export function scaffoldExecutor(spec: PairSpec): string {
  const m = DEFAULT_BODY_RULES.markers;
  const executor: SkeletonFor = { side: "executor", twinId: spec.plannerId };
  const requires = [spec.plannerId, ...spec.requires.filter((id) => id !== spec.plannerId)];
  return `---
prompt_id: ${spec.executorId}
title: ${yamlString(spec.executorTitle)}
prompt_role: executive
category: ${yamlString(spec.category)}
risk_level: ${spec.riskLevel}
description: ${yamlString(`Carries out the approved ${spec.category} plan of ${spec.plannerId}, and nothing else.`)}
pairing_required: true
paired_prompt_id: ${spec.plannerId}
accepted_planning_prompt_id: ${spec.plannerId}
reviewed_handoff_required: true
execution_consent_required: true
exact_twin_only: true
requires: ${yamlList(requires)}
related_prompts: []
default_mode: DRAFT_ONLY
allowed_modes: [DRAFT_ONLY, APPLY_SAFE, APPLY_APPROVED, VERIFY_ONLY]
---

# ${spec.executorTitle}

Carry out the approved, frozen plan of ${spec.plannerId} after \`twinlock admit\` passes.

<runtime_markers>
- \`${m[0]}\` cites the frozen evidence an action relies on.
- \`${m[1]}\` is an unknown the plan left open; stop if it blocks an action.
- \`${m[2]}\` is a finding an action addresses.
- \`${m[3]}\` is the action being carried out; only approved IDs.
- \`${m[4]}\` is the acceptance check run after the actions.
- \`${m[5]}\` stops at once and reports the reason.
</runtime_markers>

<authorization_boundary>
Only the +ACTION IDs of the approved handoff, within the consented mode, environment and budget.
</authorization_boundary>

<tool_policy>
Tools needed for the approved actions only; nothing outside the action scope.
</tool_policy>

${canonical(DEFAULT_BODY_RULES.authorityBlock, executor)}

${canonical("decision_rules", executor)}

${canonical("verification_reference", executor)}
`;
}

/** A file name for a prompt: `md-41-title-words.md`. */
export function promptFileName(id: string, title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48);
  return `${id.toLowerCase()}${slug ? `-${slug}` : ""}.md`;
}
