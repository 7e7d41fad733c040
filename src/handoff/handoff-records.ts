import "../schemas/zod-setup.js";
import { z } from "zod/mini";
import { lazySchemasOf } from "../schemas/lazy-schema.js";

/** Record IDs: `^[A-Za-z0-9][A-Za-z0-9._-]*$` (SPEC §4), rendered as markers such as `@EVIDENCE:E1`. */
export const RECORD_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A hard-stop reason slug, as in `!STOP:invalid-reviewed-handoff-or-exact-twin-consent`. */
export const STOP_REASON_PATTERN = /^[a-z0-9][a-z0-9-]{0,119}$/;

const recordSchemasOf = lazySchemasOf("handoff-records", () => {
  const MAX_TEXT = 64 * 1024;
  const tooLong = `over the ${MAX_TEXT.toLocaleString("en-US")}-character limit for one text of a record; put the long text in a file of the handoff and cite it`;
  const text = z.string().check(z.minLength(1), z.maxLength(MAX_TEXT, tooLong));
  const notes = z.optional(z.string().check(z.maxLength(MAX_TEXT, tooLong)));
  const recordId = z.string().check(z.maxLength(200), z.regex(RECORD_ID_PATTERN, "an ID such as E1 (letters, digits, . _ -)"));
  /** A citation: a bare ID or the ID written as its marker (e.g. `E1` or `@EVIDENCE:E1`). */
  const citation = z.string().check(z.minLength(1), z.maxLength(220));
  /** Citations; `atLeastOne` is the message when there must be one. */
  const citations = (atLeastOne?: string) =>
    atLeastOne === undefined
      ? z.array(citation).check(z.maxLength(10_000))
      : z.array(citation).check(z.maxLength(10_000), z.minLength(1, atLeastOne));
  /** A list of at most `max` records. */
  const records = <T extends z.ZodMiniType>(record: T, max: number) => z.array(record).check(z.maxLength(max));
  const level = z.enum(["low", "medium", "high"]);

  const EvidenceSchema = z.strictObject({
    id: recordId,
    source: text,
    observed: text,
    collected_at: z.optional(z.string().check(z.maxLength(100))),
    digest: z.optional(z.string().check(z.maxLength(200))),
    notes,
  });

  const EvidenceIndexSchema = z.strictObject({ evidence: records(EvidenceSchema, 100_000) });

  const FindingSchema = z.strictObject({
    id: recordId,
    summary: text,
    evidence: citations("a finding must cite at least one piece of evidence"),
    confidence: z.optional(level),
    notes,
  });

  const UnknownSchema = z.strictObject({
    id: recordId,
    question: text,
    status: z.enum(["open", "resolved", "deferred"]),
    owner: z.optional(z.string().check(z.maxLength(200))),
    notes,
  });

  const FindingRegisterSchema = z.strictObject({
    findings: records(FindingSchema, 100_000),
    unknowns: records(UnknownSchema, 100_000),
  });

  const ActionSchema = z.strictObject({
    id: recordId,
    summary: text,
    target: text,
    findings: citations("an action must address at least one finding"),
    risk: level,
    rollback: text,
    depends_on: citations(),
    verifies: citations("an action must be verified by at least one acceptance criterion"),
    notes,
  });

  const PlanStopSchema = z.strictObject({
    reason: z.string().check(z.regex(STOP_REASON_PATTERN, "a slug such as missing-backup")),
    resolved: z.boolean(),
    notes,
  });

  const ActionPlanSchema = z.strictObject({ actions: records(ActionSchema, 100_000), stops: records(PlanStopSchema, 10_000) });

  const CriterionSchema = z.strictObject({ id: recordId, criterion: text, method: text, notes });

  const AcceptanceCriteriaSchema = z.strictObject({ criteria: records(CriterionSchema, 100_000) });
  return {
    EvidenceSchema,
    EvidenceIndexSchema,
    FindingSchema,
    UnknownSchema,
    FindingRegisterSchema,
    ActionSchema,
    PlanStopSchema,
    ActionPlanSchema,
    CriterionSchema,
    AcceptanceCriteriaSchema,
  };
});

/* The schemas above, each built on first use (see lazy-schema.ts). */
export const EvidenceSchema = recordSchemasOf("EvidenceSchema");
export const EvidenceIndexSchema = recordSchemasOf("EvidenceIndexSchema");
export const FindingSchema = recordSchemasOf("FindingSchema");
export const UnknownSchema = recordSchemasOf("UnknownSchema");
export const FindingRegisterSchema = recordSchemasOf("FindingRegisterSchema");
export const ActionSchema = recordSchemasOf("ActionSchema");
export const PlanStopSchema = recordSchemasOf("PlanStopSchema");
export const ActionPlanSchema = recordSchemasOf("ActionPlanSchema");
export const CriterionSchema = recordSchemasOf("CriterionSchema");
export const AcceptanceCriteriaSchema = recordSchemasOf("AcceptanceCriteriaSchema");

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
