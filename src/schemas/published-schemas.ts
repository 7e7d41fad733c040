import { z } from "zod/mini";
import type { $ZodType } from "zod/v4/core";
import { AcceptanceCriteriaSchema, ActionPlanSchema, EvidenceIndexSchema, FindingRegisterSchema } from "../handoff/handoff-records.js";
import { RECEIPT_ROWS, type ReceiptKind } from "../run/receipt-kinds.js";
import { RunFileSchema } from "../run/run-schema.js";
import { SuiteConfigSchema } from "../suite/suite-config.js";

/**
 * The file each receipt kind's schema is published under, its schema taken
 * from RECEIPT_KINDS (src/receipt-kind-consumers.test.ts holds the keys to
 * the table); null for a kind published only inside run-file.schema.json.
 */
export const PUBLISHED_RECEIPT_SCHEMAS: Record<ReceiptKind, string | null> = {
  freeze: null,
  review: "review-receipt.schema.json",
  consent: "consent-receipt.schema.json",
  apply_approval: "apply-approval.schema.json",
  dry_run_result: null,
  admission: "admission-receipt.schema.json",
  stop_resolution: null,
};

/** Every published JSON Schema, by file name under `schemas/`; generated from the zod schemas that check the data. */
export const PUBLISHED_SCHEMAS: Record<string, $ZodType> = {
  "run-file.schema.json": RunFileSchema,
  ...Object.fromEntries(
    RECEIPT_ROWS.flatMap((row) => {
      const file = PUBLISHED_RECEIPT_SCHEMAS[row.kind];
      return file === null ? [] : [[file, row.schema as unknown as $ZodType]];
    }),
  ),
  "evidence-index.schema.json": EvidenceIndexSchema,
  "finding-register.schema.json": FindingRegisterSchema,
  "action-plan.schema.json": ActionPlanSchema,
  "acceptance-criteria.schema.json": AcceptanceCriteriaSchema,
  "twinlock-config.schema.json": SuiteConfigSchema,
};

/** The text of one published schema, as committed. */
export function renderSchema(name: string, schema: $ZodType): string {
  const json = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as Record<string, unknown>;
  return `${JSON.stringify({ $id: `https://twinlock.dev/schemas/${name}`, ...json }, null, 2)}\n`;
}
