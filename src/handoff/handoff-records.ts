import "../schemas/zod-setup.js";
import { z } from "zod";

/** Record IDs: `^[A-Za-z0-9][A-Za-z0-9._-]*$` (SPEC §4), rendered as markers such as `@EVIDENCE:E1`. */
export const RECORD_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const MAX_TEXT = 64 * 1024;
const text = z.string().min(1).max(MAX_TEXT);
const recordId = z.string().max(200).regex(RECORD_ID_PATTERN, "an ID such as E1 (letters, digits, . _ -)");
/** A citation: a bare ID or the ID written as its marker (e.g. `E1` or `@EVIDENCE:E1`). */
const citation = z.string().min(1).max(220);
const citations = z.array(citation).max(10_000);

export const EvidenceSchema = z
  .object({
    id: recordId,
    source: text,
    observed: text,
    collected_at: z.string().max(100).optional(),
    digest: z.string().max(200).optional(),
    notes: z.string().max(MAX_TEXT).optional(),
  })
  .strict();

export const EvidenceIndexSchema = z.object({ evidence: z.array(EvidenceSchema).max(100_000) }).strict();

export const FindingSchema = z
  .object({
    id: recordId,
    summary: text,
    evidence: citations.min(1, "a finding must cite at least one piece of evidence"),
    confidence: z.enum(["low", "medium", "high"]).optional(),
    notes: z.string().max(MAX_TEXT).optional(),
  })
  .strict();

export const UnknownSchema = z
  .object({
    id: recordId,
    question: text,
    status: z.enum(["open", "resolved", "deferred"]),
    owner: z.string().max(200).optional(),
    notes: z.string().max(MAX_TEXT).optional(),
  })
  .strict();

export const FindingRegisterSchema = z
  .object({ findings: z.array(FindingSchema).max(100_000), unknowns: z.array(UnknownSchema).max(100_000) })
  .strict();

/** A hard-stop reason slug, as in `!STOP:invalid-reviewed-handoff-or-exact-twin-consent`. */
export const STOP_REASON_PATTERN = /^[a-z0-9][a-z0-9-]{0,119}$/;

export const ActionSchema = z
  .object({
    id: recordId,
    summary: text,
    target: text,
    findings: citations.min(1, "an action must address at least one finding"),
    risk: z.enum(["low", "medium", "high"]),
    rollback: text,
    depends_on: citations,
    verifies: citations.min(1, "an action must be verified by at least one acceptance criterion"),
    notes: z.string().max(MAX_TEXT).optional(),
  })
  .strict();

export const PlanStopSchema = z
  .object({
    reason: z.string().regex(STOP_REASON_PATTERN, "a slug such as missing-backup"),
    resolved: z.boolean(),
    notes: z.string().max(MAX_TEXT).optional(),
  })
  .strict();

export const ActionPlanSchema = z
  .object({ actions: z.array(ActionSchema).max(100_000), stops: z.array(PlanStopSchema).max(10_000) })
  .strict();

export const CriterionSchema = z
  .object({ id: recordId, criterion: text, method: text, notes: z.string().max(MAX_TEXT).optional() })
  .strict();

export const AcceptanceCriteriaSchema = z.object({ criteria: z.array(CriterionSchema).max(100_000) }).strict();

export type EvidenceIndex = z.infer<typeof EvidenceIndexSchema>;
export type FindingRegister = z.infer<typeof FindingRegisterSchema>;
export type ActionPlan = z.infer<typeof ActionPlanSchema>;
export type AcceptanceCriteria = z.infer<typeof AcceptanceCriteriaSchema>;

/** The four record files of SPEC §4, by file name. */
export const RECORD_FILES = {
  "evidence_index.json": EvidenceIndexSchema,
  "finding_register.json": FindingRegisterSchema,
  "action_plan.json": ActionPlanSchema,
  "acceptance_criteria.json": AcceptanceCriteriaSchema,
} as const;

export type RecordFile = keyof typeof RECORD_FILES;

/** All four records of a handoff, parsed. */
export interface HandoffRecords {
  evidence: EvidenceIndex;
  findings: FindingRegister;
  actions: ActionPlan;
  criteria: AcceptanceCriteria;
}

/** The marker each record kind is written as (SPEC §2 runtime markers). */
export const MARKERS = {
  evidence: "@EVIDENCE:",
  unknown: "?UNKNOWN:",
  finding: "#FINDING:",
  action: "+ACTION:",
  criterion: "=VERIFY:",
} as const;
