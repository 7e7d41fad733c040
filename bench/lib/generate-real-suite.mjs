/**
 * Writes a suite shaped like the real, public 257-prompt Mission Directives
 * suite that teams adopt twinlock on, not like twinlock's own scaffold:
 *
 *   - the config at the repository root (`prompts: ["prompts/**\/*.md"]`)
 *     beside a README, docs and schemas that are never prompts;
 *   - frontmatter of ~125 lines and ~4.5 KB per prompt, as a YAML dumper
 *     writes it: indentless block sequences, nested block maps three levels
 *     deep, block sequences of maps, anchors and aliases (`&id001` … `*id001`),
 *     multi-line plain scalars, single- and double-quoted strings, a literal
 *     block scalar, flow lists and `[]`;
 *   - Markdown bodies of ~12 KB with headings, tables, code fences and the
 *     blocks and markers the default body rules ask for;
 *   - 32 pairs in 257 prompts (the same share at other sizes).
 *
 * `test/bench/generator-shape.test.ts` holds it to that shape, so the
 * benchmark cannot drift back to the easy case.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const CATEGORIES = [
  ["debugging", "crash", "stack traces, core dumps and the failing test's log"],
  ["security", "vulnerability", "the advisory, the lockfile and the reachable call sites"],
  ["dependencies", "upgrade", "the changelog, the lockfile diff and deprecation warnings"],
  ["database", "migration", "the schema, table sizes and lock wait statistics"],
  ["performance", "regression", "flame graphs, p99 latency and the deploy timeline"],
  ["incident", "outage", "alerts, error rates and the change log of the hour"],
  ["release", "rollout", "the release checklist, canary metrics and open blockers"],
  ["infrastructure", "capacity change", "utilisation graphs, quotas and autoscaler events"],
];
const UNPAIRED_ROLES = ["operational", "gate", "control", "operational"];
const MARKERS = ["@EVIDENCE:{id}", "?UNKNOWN:{id}", "#FINDING:{id}", "+ACTION:{id}", "=VERIFY:{id}", "!STOP:{reason}"];

/** The share of the real suite: 32 pairs in 257 prompts. */
export function pairsFor(total) {
  return Math.max(1, Math.round((total * 32) / 257));
}

const id = (n) => `MD-${String(n).padStart(2, "0")}`;

/** Frontmatter lines (without the `---` fences) of one prompt, as a YAML dumper writes them. */
export function realisticFrontmatter(p) {
  const [category, noun, evidence] = p.domain;
  const anchor = `id${String(p.n % 997).padStart(3, "0")}`;
  const lines = [
    `prompt_id: ${p.id}`,
    `title: ${p.title}`,
    `version: ${1 + (p.n % 3)}.${p.n % 10}.${p.n % 7}`,
    `status: ${p.n % 5 === 0 ? "beta" : "stable"}`,
    `prompt_role: ${p.role}`,
    `category: ${category}`,
    `risk_level: ${p.role === "executive" ? "high" : p.role === "investigative" ? "medium" : "low"}`,
    `description: ${p.role === "executive" ? "Carries out" : "Investigates"} ${noun} work number ${p.n} end to end, gathering ${evidence},`,
    `  and records every observation with its source so that a reviewer can reopen it; it`,
    `  never acts outside its authorization boundary and stops on any surprise.`,
    `pairing_required: ${p.twin ? "true" : "false"}`,
    `paired_prompt_id: ${p.twin ? p.twin : "null"}`,
  ];
  if (p.role === "investigative")
    lines.push(
      "plan_review_required: true",
      "execution_consent_required: true",
      "exact_twin_only: true",
      "review_cycle: review_revise_refreeze_rereview_then_consent",
      "default_mode: PLAN_ONLY",
      "allowed_modes:",
      "- AUDIT_ONLY",
      "- PLAN_ONLY",
    );
  else if (p.role === "executive")
    lines.push(
      `accepted_planning_prompt_id: ${p.twin}`,
      "reviewed_handoff_required: true",
      "execution_consent_required: true",
      "exact_twin_only: true",
      `dry_run_required: ${p.n % 2 === 0 ? "true" : "false"}`,
      "default_mode: DRAFT_ONLY",
      "allowed_modes:",
      "- DRAFT_ONLY",
      "- APPLY_SAFE",
      "- APPLY_APPROVED",
      "- VERIFY_ONLY",
    );
  else
    lines.push(
      `default_mode: ${p.role === "operational" ? "DRAFT_ONLY" : "AUDIT_ONLY"}`,
      `allowed_modes: [${p.role === "operational" ? "DRAFT_ONLY" : "AUDIT_ONLY"}]`,
    );
  lines.push(p.requires.length === 0 ? "requires: []" : "requires:", ...p.requires.map((r) => `- ${r}`));
  lines.push(p.related.length === 0 ? "related_prompts: []" : `related_prompts: [${p.related.join(", ")}]`);
  lines.push(
    "contract_refs:",
    "- runtime-markers",
    "- authorization-boundary",
    "- handoff-contract",
    "owners:",
    `  team: ${category}-guild`,
    `  escalation: '#oncall-${category}'`,
    "  reviewers:",
    "  - role: tech-lead",
    "    required: true",
    `    contact: "lead+${category}@example.org"`,
    "  - role: security",
    `    required: ${p.n % 2 === 0 ? "true" : "false"}`,
    "    contact: null",
    "inputs:",
    "  required:",
    "  - name: symptom",
    "    type: string",
    `    description: "What fails, where, and since when (${noun} ${p.n})"`,
    "  - name: repository",
    "    type: path",
    "    description: Repository root the prompt may read; never a parent folder, never a",
    "      home directory, never a path given by untrusted input.",
    "  optional:",
    "  - name: incident_id",
    "    type: string",
    "    pattern: '^INC-[0-9]+$'",
    "  - name: deadline",
    "    type: date",
    "outputs:",
    "  handoff:",
    "    format: mission-directives",
    "    files:",
    "    - path: evidence_index.json",
    "      schema: schemas/evidence_index.schema.json",
    `      media: &${anchor}`,
    "      - application/json",
    "    - path: finding_register.json",
    "      schema: schemas/finding_register.schema.json",
    `      media: *${anchor}`,
    "    - path: action_plan.json",
    "      schema: schemas/action_plan.schema.json",
    `      media: *${anchor}`,
    "    - path: acceptance_criteria.json",
    "      schema: schemas/acceptance_criteria.schema.json",
    `      media: *${anchor}`,
    "  report:",
    "    path: report.md",
    "    media:",
    "    - text/markdown",
    "tool_policy:",
    "  allowed:",
    "    read:",
    "    - filesystem",
    "    - logs",
    "    - metrics",
    `    network: ${p.role === "executive" ? "true" : "false"}`,
    "  denied:",
    "  - package_install",
    "  - git_push",
    "  - secrets_read",
    "quality_gates:",
    "  evidence:",
    `    minimum_sources: ${2 + (p.n % 4)}`,
    "    freshness_hours: 24",
    "    trust_levels: [trusted, mixed]",
    "  findings:",
    "    require_confidence: true",
    "    severities:",
    "      block: [critical, high]",
    "      warn: [medium]",
    "  actions:",
    "    require_rollback: true",
    `    max_actions: ${5 + (p.n % 20)}`,
    "limits:",
    `  max_runtime_minutes: ${15 + (p.n % 60)}`,
    "  max_tokens: 200000",
    `  cost_ceiling_usd: ${(5 + (p.n % 40) / 4).toFixed(2)}`,
    "stop_conditions:",
    "- missing-evidence",
    "- scope-drift",
    "- invalid-reviewed-handoff-or-exact-twin-consent",
    "changelog:",
    `- version: ${1 + (p.n % 3)}.${p.n % 10}.${p.n % 7}`,
    `  date: '2026-0${1 + (p.n % 9)}-1${p.n % 10}'`,
    "  summary: Clarified the consent question so that it names the exact execution twin and",
    "    the frozen hash, and split verification out of the executor.",
    "- version: 1.0.0",
    "  date: '2025-11-04'",
    "  summary: First public version.",
    `tags: [${category}, ${p.role}, 'mission-directives', "v${1 + (p.n % 3)}"]`,
    "examples:",
    `- title: "A ${noun} seen only on CI"`,
    "  input:",
    `    symptom: 'the ${noun} shows 1 run in 20 on CI, never on a laptop'`,
    "    repository: ./services/checkout",
    "    environment:",
    "      name: staging",
    "      region: eu-west-1",
    "  expected: The plan names the race between the cache warm-up and the first request,",
    "    cites the CI logs, and proposes a fix behind a flag with a rollback.",
    `- title: "A ${noun} after a dependency bump"`,
    "  input:",
    `    symptom: "started with release 4.2; the lockfile changed 37 packages"`,
    "    repository: ./services/billing",
    "  expected: The plan bisects the lockfile change and names the one package to pin.",
    "glossary:",
    '  evidence: "A record of something observed, with its source and the time it was',
    '    taken; never a conclusion."',
    "  finding: A conclusion that cites the evidence it rests on, with a confidence.",
    "  action: A change the executor may make once a person approved the frozen plan",
    "    and consented to run exactly its twin.",
    "review:",
    "  checklist:",
    `  - "Every finding cites the evidence it rests on, by ID, and says how sure it is (${noun} ${p.n})."`,
    "  - 'Every action names its target, its rollback and the criteria that verify it.'",
    "  - Open questions are unknowns with an owner, never guesses written as findings.",
    "  - The plan stays inside the authorization boundary and names nothing it may not touch.",
    "  - The consent question names the exact execution twin and the frozen hash, and nothing else.",
    "  sign_off:",
    "    required_roles: [tech-lead, security]",
    "    expires_after_hours: 72",
    "notes: |",
    "  Keep this prompt's body in step with its frontmatter.",
    `  Reviewed for ${category} work; ask the owners before changing its contract.`,
  );
  return lines;
}

function markerBlock() {
  return `<runtime_markers>\n${MARKERS.map((m) => `- \`${m}\` is written literally, never reworded.`).join("\n")}\n</runtime_markers>`;
}

/** Roughly 12 KB of Markdown the way real prompt bodies read: sections, a table, code, checklists. */
function bodySections(p) {
  const [category, noun, evidence] = p.domain;
  const out = [];
  for (let s = 1; out.join("\n").length < 10500; s++) {
    out.push(
      `## ${s}. ${["Context", "Procedure", "Evidence", "Decisions", "Reporting", "Failure modes"][s % 6]}`,
      "",
      `This section covers ${category} work of type ${noun} (${p.id}, part ${s}). Gather ${evidence}; record each`,
      "observation with its source, the time it was taken and the tool that produced it, so a reviewer can",
      "reopen it. Keep every hypothesis as an open unknown until evidence settles it, and never widen the scope",
      "beyond what the plan names.",
      "",
      "| step | what | evidence | stop when |",
      "|---|---|---|---|",
      `| ${s}.1 | reproduce the ${noun} | logs and traces | it cannot be reproduced in ${10 + s} minutes |`,
      `| ${s}.2 | bound the blast radius | dependency graph | an owner is unknown |`,
      `| ${s}.3 | write the records | the handoff files | readiness fails twice |`,
      "",
      "```sh",
      `twinlock readiness handoff/ && twinlock hash handoff/   # part ${s}`,
      "```",
      "",
      `- [ ] every finding cites \`@EVIDENCE:E${s}\` or another evidence record`,
      `- [ ] every action \`+ACTION:A${s}\` cites its findings and a \`=VERIFY:V${s}\` criterion`,
      "- [ ] open questions are written as `?UNKNOWN:{id}` records, not guesses",
      "",
    );
  }
  return out.join("\n");
}

function body(p) {
  const [, noun] = p.domain;
  const common = `# ${p.title}\n\n${bodySections(p)}\n\n${markerBlock()}\n\n<authorization_boundary>\n${
    p.role === "executive"
      ? "Only the +ACTION IDs of the approved handoff, within the consented mode, environment and budget."
      : "Read-only: no writes, deploys or migrations. Anything that would change a system becomes a +ACTION in the plan."
  }\n</authorization_boundary>\n\n<tool_policy>\nThe tools listed in the frontmatter's tool_policy, and nothing else.\n</tool_policy>\n`;
  if (p.role === "investigative")
    return `${common}
<handoff_contract>
Write evidence_index.json, finding_register.json, action_plan.json and acceptance_criteria.json;
every finding cites evidence, every action cites findings and the criteria that verify it.
</handoff_contract>

<verification_design>
- Check that the ${noun} ${p.n} no longer reproduces, and record who checked it.
</verification_design>

<plan_review_and_execution_gate>
Freeze the handoff and present it for user review. Invite requested changes; record feedback without
treating it as approval; revise every affected record, re-run readiness, and re-freeze under a new hash
before asking for review again. After explicit approval, ask one execution consent question naming the
exact execution twin ${p.twin} (${p.twinTitle}). No other executor may act on this plan.
</plan_review_and_execution_gate>
`;
  if (p.role === "executive")
    return `${common}
<reviewed_handoff_authority>
Act only on the handoff of ${p.twin} that a person reviewed, approved and consented to, after
\`twinlock admit\` succeeds for ${p.id}. Any mismatch is !STOP:invalid-reviewed-handoff-or-exact-twin-consent.
</reviewed_handoff_authority>

<decision_rules>
Follow the plan's order and dependencies; on any surprise, stop rather than improvise.
</decision_rules>

<verification_reference>
Run every check in the frozen acceptance_criteria.json, as the planner designed them.
</verification_reference>
`;
  return common;
}

/** The prompts of a `total`-prompt suite, as data (written by generateRealSuite). */
export function realisticPrompts(total) {
  const pairs = pairsFor(total);
  const unpaired = total - 2 * pairs;
  const prompts = [];
  // MD-01..: the unpaired prompts first (the first four are contracts everything requires), then the pairs.
  for (let k = 0; k < unpaired; k++) {
    const n = k + 1;
    const domain = CATEGORIES[k % CATEGORIES.length];
    const role = k < 4 ? "control" : UNPAIRED_ROLES[k % UNPAIRED_ROLES.length];
    prompts.push({
      id: id(n),
      n,
      domain,
      role,
      title: `${domain[0]} ${role} prompt ${n}`,
      requires: k < 4 ? [] : [id(1 + (k % 4))],
      related: k > 5 ? [id(n - 1), id(n - 2)] : [],
    });
  }
  for (let k = 0; k < pairs; k++) {
    const n = unpaired + 2 * k + 1;
    const domain = CATEGORIES[k % CATEGORIES.length];
    const plannerTitle = `${domain[0]} ${domain[1]} planner ${k + 1}`;
    const executorTitle = `${domain[0]} ${domain[1]} executor ${k + 1}`;
    const requires = [id(1 + (k % 4)), id(1 + ((k + 1) % 4))];
    const related = unpaired > 4 ? [id(5 + (k % (unpaired - 4)))] : [];
    prompts.push(
      { id: id(n), n, domain, role: "investigative", title: plannerTitle, twin: id(n + 1), twinTitle: executorTitle, requires, related },
      {
        id: id(n + 1),
        n: n + 1,
        domain,
        role: "executive",
        title: executorTitle,
        twin: id(n),
        twinTitle: plannerTitle,
        requires: [id(n), ...requires],
        related,
      },
    );
  }
  return { prompts, pairs };
}

/** The whole text of one prompt file. */
export function realisticPromptFile(p) {
  return `---\n${realisticFrontmatter(p).join("\n")}\n---\n\n${body(p)}`;
}

/**
 * Write a repository into `dir` (created): `twinlock.yaml` at its root with
 * `prompts: ["prompts/**\/*.md"]`, a README, docs and schemas beside it, and
 * `total` prompts under `prompts/<category>/`. Returns what it holds.
 */
export function generateRealSuite(dir, total) {
  const { prompts, pairs } = realisticPrompts(total);
  mkdirSync(join(dir, "docs"), { recursive: true });
  mkdirSync(join(dir, "schemas"), { recursive: true });
  writeFileSync(
    join(dir, "twinlock.yaml"),
    `# generated by bench/lib/generate-real-suite.mjs\nsuite_id: real-${total}\ndeclared_pairs: ${pairs}\nprompts:\n  - "prompts/**/*.md"\nexclude:\n  - "prompts/**/drafts/**"\n`,
  );
  // Files a repository has beside its prompts: none has frontmatter, none may be read as a prompt.
  writeFileSync(join(dir, "README.md"), "# Mission Directives\n\nA suite of agent prompts.\n");
  writeFileSync(join(dir, "CHANGELOG.md"), "# Changelog\n\n- 2.4.1: clarified consent.\n");
  for (let d = 0; d < 20; d++) writeFileSync(join(dir, "docs", `guide-${d}.md`), `# Guide ${d}\n\nHow to use the suite, part ${d}.\n`);
  writeFileSync(join(dir, "schemas", "action_plan.schema.json"), '{"type": "object"}\n');
  let bytes = 0;
  let frontmatterLines = 0;
  for (const p of prompts) {
    const text = realisticPromptFile(p);
    const folder = join(dir, "prompts", p.domain[0]);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `${p.id.toLowerCase()}.md`), text);
    bytes += Buffer.byteLength(text);
    frontmatterLines += realisticFrontmatter(p).length;
  }
  mkdirSync(join(dir, "prompts", "debugging", "drafts"), { recursive: true });
  writeFileSync(join(dir, "prompts", "debugging", "drafts", "unfinished.md"), "not a prompt yet\n");
  return { dir, prompts: total, pairs, unpaired: total - 2 * pairs, bytes, frontmatterLines };
}
