/**
 * Writes a synthetic prompt suite for the benchmark: half the prompts in
 * canonical planner/executor pairs (SPEC §2), the rest unpaired control,
 * operational and gate prompts. Bodies mirror `src/suite/scaffold-pair.ts`
 * so every prompt passes the default body rules, with a domain paragraph
 * that varies per prompt so no two files are byte-identical.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const MARKERS = ["@EVIDENCE:{id}", "?UNKNOWN:{id}", "#FINDING:{id}", "+ACTION:{id}", "=VERIFY:{id}", "!STOP:{reason}"];

const DOMAINS = [
  {
    category: "debugging",
    noun: "crash",
    evidence: "stack traces, core dumps and the failing test's log",
    verify: "the failing test passes 50 times in a row",
  },
  {
    category: "security",
    noun: "vulnerability",
    evidence: "the advisory, the lockfile and the reachable call sites",
    verify: "the scanner reports no finding for the advisory ID",
  },
  {
    category: "dependencies",
    noun: "upgrade",
    evidence: "the changelog, the lockfile diff and deprecation warnings",
    verify: "the full test suite and the smoke deploy pass",
  },
  {
    category: "database",
    noun: "migration",
    evidence: "the schema, table sizes and lock wait statistics",
    verify: "row counts and checksums match before and after",
  },
  {
    category: "performance",
    noun: "regression",
    evidence: "flame graphs, p99 latency and the deploy timeline",
    verify: "p99 latency is back within 5% of the baseline",
  },
  {
    category: "incident",
    noun: "outage",
    evidence: "alerts, error rates and the change log of the hour",
    verify: "error rate stays under the SLO for one hour",
  },
  {
    category: "release",
    noun: "rollout",
    evidence: "the release checklist, canary metrics and open blockers",
    verify: "the canary holds for 30 minutes at 10% traffic",
  },
  {
    category: "infrastructure",
    noun: "capacity change",
    evidence: "utilisation graphs, quotas and autoscaler events",
    verify: "utilisation stays under 70% at the daily peak",
  },
];

const UNPAIRED_ROLES = ["control", "operational", "gate"];

const q = (s) => JSON.stringify(s);
const list = (ids) => `[${ids.join(", ")}]`;

function markerBlock() {
  return `<runtime_markers>
${MARKERS.map((m) => `- \`${m}\` is written literally, never reworded.`).join("\n")}
</runtime_markers>`;
}

function domainParagraph(d, n) {
  return `## Context ${n}

This prompt handles ${d.category} work of type ${d.noun} number ${n}. Gather ${d.evidence};
record each observation with its source so a reviewer can reopen it, and keep every
hypothesis as an open unknown until evidence settles it. Done means ${d.verify}.`;
}

function planner(p) {
  const d = p.domain;
  return `---
prompt_id: ${p.id}
title: ${q(p.title)}
prompt_role: investigative
category: ${q(d.category)}
risk_level: medium
description: ${q(`Investigates and plans ${d.category} work for review; never changes anything.`)}
pairing_required: true
paired_prompt_id: ${p.twin.id}
plan_review_required: true
execution_consent_required: true
exact_twin_only: true
review_cycle: review_revise_refreeze_rereview_then_consent
requires: ${list(p.requires)}
related_prompts: ${list(p.related)}
contract_refs: [runtime-markers, authorization-boundary]
default_mode: PLAN_ONLY
allowed_modes: [AUDIT_ONLY, PLAN_ONLY]
---

# ${p.title}

Investigate, gather evidence, and produce a frozen handoff for ${p.twin.id}. Read-only.

${domainParagraph(d, p.n)}

${markerBlock()}

<authorization_boundary>
Read-only: no writes, deploys or migrations. Anything that would change a system becomes a +ACTION in the plan.
</authorization_boundary>

<tool_policy>
Read files, logs and metrics. No tool that writes, deploys or sends messages.
</tool_policy>

<handoff_contract>
Write evidence_index.json, finding_register.json, action_plan.json and acceptance_criteria.json;
every finding cites evidence, every action cites findings and the criteria that verify it.
Run \`twinlock readiness\` until it passes.
</handoff_contract>

<verification_design>
- Check that ${d.verify} for ${d.noun} ${p.n}, and record who checked it.
</verification_design>

<plan_review_and_execution_gate>
Freeze the handoff with \`twinlock freeze-pair-handoff\` and present it for user review.
Invite requested changes; record feedback without treating it as approval; revise every affected
record, re-run readiness, and re-freeze under a new hash before asking for review again.
After explicit approval, ask one execution consent question naming the exact execution twin
${p.twin.id} (${p.twin.title}). No other executor may act on this plan.
</plan_review_and_execution_gate>
`;
}

function executor(p) {
  const d = p.domain;
  const plannerId = p.twin.id;
  return `---
prompt_id: ${p.id}
title: ${q(p.title)}
prompt_role: executive
category: ${q(d.category)}
risk_level: medium
description: ${q(`Carries out the approved ${d.category} plan of ${plannerId}, and nothing else.`)}
pairing_required: true
paired_prompt_id: ${plannerId}
accepted_planning_prompt_id: ${plannerId}
reviewed_handoff_required: true
execution_consent_required: true
exact_twin_only: true
requires: ${list([plannerId, ...p.requires])}
related_prompts: ${list(p.related)}
contract_refs: [runtime-markers, authorization-boundary]
default_mode: DRAFT_ONLY
allowed_modes: [DRAFT_ONLY, APPLY_SAFE, APPLY_APPROVED, VERIFY_ONLY]
---

# ${p.title}

Carry out the approved, frozen plan of ${plannerId} after \`twinlock admit\` passes.

${domainParagraph(d, p.n)}

${markerBlock()}

<authorization_boundary>
Only the +ACTION IDs of the approved handoff, within the consented mode, environment and budget.
</authorization_boundary>

<tool_policy>
Tools needed for the approved actions only; nothing outside the action scope.
</tool_policy>

<reviewed_handoff_authority>
Act only on the handoff of ${plannerId} that a person reviewed, approved and consented to,
after \`twinlock admit\` succeeds for ${p.id}. Any mismatch is !STOP:invalid-reviewed-handoff-or-exact-twin-consent.
</reviewed_handoff_authority>

<decision_rules>
Follow the plan's order and dependencies; on any surprise, stop rather than improvise.
</decision_rules>

<verification_reference>
Run every =VERIFY check listed in the frozen acceptance_criteria.json, as the planner designed them.
</verification_reference>
`;
}

function unpaired(p) {
  const d = p.domain;
  const mode = p.role === "operational" ? "DRAFT_ONLY" : "AUDIT_ONLY";
  return `---
prompt_id: ${p.id}
title: ${q(p.title)}
prompt_role: ${p.role}
category: ${q(d.category)}
risk_level: low
description: ${q(`A ${p.role} prompt for ${d.category} work; it is not part of any pair.`)}
pairing_required: false
paired_prompt_id: null
requires: ${list(p.requires)}
related_prompts: ${list(p.related)}
contract_refs: [runtime-markers, authorization-boundary]
default_mode: ${mode}
allowed_modes: [${mode}]
---

# ${p.title}

A ${p.role} prompt: it reports and drafts, it never changes a system and is never a twin.

${domainParagraph(d, p.n)}

${markerBlock()}

<authorization_boundary>
Read-only. It records no review, consent or admission in any run file.
</authorization_boundary>

<tool_policy>
Read APIs and \`twinlock validate\`, \`pair-status\` and \`log\` only.
</tool_policy>
`;
}

/**
 * Write a suite of `total` prompts into `dir` (created) and return what it holds.
 * `total / 2` prompts (rounded down to an even number) form `pairs` genuine pairs.
 */
export function generateSuite(dir, total) {
  const pairs = Math.floor(total / 4);
  const unpairedCount = total - pairs * 2;
  const controls = Math.max(1, Math.ceil(unpairedCount / 50));
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "twinlock.yaml"),
    `# generated by bench/lib/generate-suite.mjs\nsuite_id: bench-${total}\ndeclared_pairs: ${pairs}\n`,
  );
  const write = (p, text) => {
    const folder = join(dir, p.domain.category, `part-${String(Math.floor(p.n / 500)).padStart(3, "0")}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `${p.id.toLowerCase()}.md`), text);
  };
  let bytes = 0;
  const emit = (p, text) => {
    bytes += Buffer.byteLength(text);
    write(p, text);
  };

  // Unpaired: the first few are control contracts every other prompt requires; the rest alternate operational / gate.
  const controlId = (i) => `BC-${(i % controls) + 1}`;
  for (let i = 0; i < unpairedCount; i++) {
    const isControl = i < controls;
    const role = isControl ? "control" : UNPAIRED_ROLES[1 + (i % 2)];
    const id = isControl ? `BC-${i + 1}` : `BU-${i + 1}`;
    const domain = DOMAINS[i % DOMAINS.length];
    const requires = isControl ? [] : [controlId(i)];
    const related = !isControl && i > controls ? [`BU-${i}`] : [];
    emit(
      { id, n: i + 1, role, domain, requires, related },
      unpaired({ id, n: i + 1, role, domain, requires, related, title: `${domain.category} ${role} prompt ${i + 1}` }),
    );
  }
  for (let k = 0; k < pairs; k++) {
    const domain = DOMAINS[k % DOMAINS.length];
    const n = k + 1;
    const plannerId = `BP-${2 * k + 1}`;
    const executorId = `BP-${2 * k + 2}`;
    const plannerTitle = `${domain.category} ${domain.noun} planner ${n}`;
    const executorTitle = `${domain.category} ${domain.noun} executor ${n}`;
    const requires = [controlId(k)];
    const related = unpairedCount > controls ? [`BU-${controls + 1 + (k % (unpairedCount - controls))}`] : [];
    const p = { id: plannerId, n, domain, requires, related, title: plannerTitle, twin: { id: executorId, title: executorTitle } };
    const e = { id: executorId, n, domain, requires, related, title: executorTitle, twin: { id: plannerId, title: plannerTitle } };
    emit(p, planner(p));
    emit(e, executor(e));
  }
  return { dir, prompts: total, pairs, unpaired: unpairedCount, bytes };
}
